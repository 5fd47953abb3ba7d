/**
 * A count-guarded complete (see completeJobs) changed fewer rows than it was given: some of the
 * batch's leases were lost. Which ones only the locking read can say, so the finalize rolls its
 * transaction back and writes the batch again that way. Internal; never reaches a caller.
 */
export class GuardTurnedDown extends Error {
  constructor(readonly given: number, readonly changed: number) {
    super(`the lease guard turned down ${given - changed} of ${given} completion(s)`);
  }
}
