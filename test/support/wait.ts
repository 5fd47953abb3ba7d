/** Polls `check` until it returns a truthy value; rejects with `what` after `timeoutMs`. */
export async function eventually<T>(what: string, check: () => Promise<T>, timeoutMs = 30_000, everyMs = 25): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
