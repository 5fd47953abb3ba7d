/** What the health indicator decides from the in-memory vitals and the database read: pure, unit-tested. */
export interface HealthInputs {
  now: number;
  leaseTtlMs: number;
  /** The database answered (the oldest ready age: undefined while none has been read yet); else why not. */
  database: { ok: true; oldestReadyAgeMs?: number } | { ok: false; error: string };
  claimFailingSince: number;
  heartbeatFailingSince: number;
  /** Since when the claim / the lease renewal in flight has waited for an answer (0 = none in flight). */
  claimWaitingSince?: number;
  heartbeatWaitingSince?: number;
  maxOldestReadyAgeMs?: number;
}

export type HealthVerdict = { status: 'up' | 'degraded' | 'down'; message?: string };

export function healthVerdict(i: HealthInputs): HealthVerdict {
  if (!i.database.ok) return { status: 'down', message: `database unreachable: ${i.database.error}` };
  // Failing for longer than a lease TTL: this process's jobs are being reclaimed by others by now.
  if (i.claimFailingSince && i.now - i.claimFailingSince > i.leaseTtlMs) {
    return { status: 'down', message: `claiming has been failing for ${i.now - i.claimFailingSince} ms (lease TTL ${i.leaseTtlMs} ms)` };
  }
  if (i.heartbeatFailingSince && i.now - i.heartbeatFailingSince > i.leaseTtlMs) {
    return { status: 'down', message: `lease renewal has been failing for ${i.now - i.heartbeatFailingSince} ms (lease TTL ${i.leaseTtlMs} ms)` };
  }
  // Waiting that long (on a lock, a connection that never answers) costs the leases just the same.
  if (i.heartbeatWaitingSince && i.now - i.heartbeatWaitingSince > i.leaseTtlMs) {
    return { status: 'down', message: `lease renewal has waited ${i.now - i.heartbeatWaitingSince} ms for the database (lease TTL ${i.leaseTtlMs} ms)` };
  }
  if (i.claimWaitingSince && i.now - i.claimWaitingSince > i.leaseTtlMs) {
    return { status: 'down', message: `a claim has waited ${i.now - i.claimWaitingSince} ms for the database (lease TTL ${i.leaseTtlMs} ms)` };
  }
  const age = i.database.oldestReadyAgeMs;
  if (i.maxOldestReadyAgeMs !== undefined && age !== undefined && age > i.maxOldestReadyAgeMs) {
    return { status: 'degraded', message: `the oldest ready job has waited ${age} ms (threshold ${i.maxOldestReadyAgeMs} ms)` };
  }
  return { status: 'up' };
}
