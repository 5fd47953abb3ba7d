/**
 * The claim that ends a finalize transaction failed. The finalize rolls the transaction back and
 * writes the batch again without the claim: a finalize must never fail because its claim did,
 * and after some errors (a MySQL deadlock, a lost connection) the transaction is gone anyway.
 * Rolling back costs a second write only on this rare path; a savepoint around every claim cost
 * two more round trips in every finalize that claims (a chain link on MariaDB: 9 → 7).
 * Internal; never reaches a caller.
 */
export class FollowUpFailed extends Error {
  constructor(readonly failure: unknown) {
    super('the claim that ends a finalize failed');
  }
}
