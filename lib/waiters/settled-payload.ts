/**
 * Calls `visit` with each id of a settled-channel payload (`12,345,6789`), reading digits in
 * place: a process with waiters also hears of every job it settles itself, so this runs for
 * every completed batch, and split() plus Number() allocated a string per id for nothing.
 */
export function forEachPayloadId(payload: string, visit: (id: number) => void): void {
  let id = 0;
  let digits = 0;
  for (let i = 0; i <= payload.length; i++) {
    const c = i < payload.length ? payload.charCodeAt(i) : 44; // a comma after the last id
    if (c >= 48 && c <= 57) {
      id = id * 10 + (c - 48);
      digits++;
    } else {
      if (c !== 44) return; // not a payload of ours
      if (digits) visit(id);
      id = 0;
      digits = 0;
    }
  }
}
