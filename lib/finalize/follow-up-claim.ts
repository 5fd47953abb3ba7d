import type { ClaimRequest } from '../claim/claim-request';
import type { ClaimedJob } from '../claim/claimed-job';

/**
 * The worker's side of a finalize transaction that ends with the worker's own claim (on
 * PostgreSQL the one-statement complete's last part, lib/finalize/complete.sql.ts's
 * completeThenClaimPostgres). A chain link used to cost three
 * transactions: a claim when the slot freed (nothing ready yet), the finalize that promotes the
 * next link, and the claim the promotion's wake started. Claiming after the promotion, inside
 * the finalize, takes the next link in the same transaction. The scheduler provides this port,
 * so it decides what to claim and where the jobs go, and never sees the transaction.
 *
 * Protocol, per write: `request` is called inside the transaction, after the promotions (again
 * if the transaction is retried); when it gave a request, `ended` is called once after the
 * transaction, with the jobs if the claim committed. A write that fails or gives no request
 * calls `missed`, so that a tick that left its claim to this write claims after all.
 */
export interface FollowUpClaimer {
  /**
   * The worker knows of no ready work (its last look found none): what the finalize promotes
   * is what it would claim next. PostgreSQL ends a finalize with the claim only then (see
   * FinalizeService.claimsNext): its claims otherwise run beside the finalize, not after it.
   */
  nothingReady(): boolean;
  /** The claim a tick would make now, or undefined for none (the caller then claims nothing). */
  request(): ClaimRequest | undefined;
  /** After the transaction: the jobs claimed, or undefined when the claim did not commit. */
  ended(jobs: ClaimedJob[] | undefined): void;
  /** The write ended without claiming. */
  missed(): void;
}
