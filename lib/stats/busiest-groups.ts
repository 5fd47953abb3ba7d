/** A group's open work, as stats() lists it. */
export interface GroupLoad {
  group: string;
  ready: number;
  running: number;
}

/**
 * Text order of the databases' binary collation: UTF-8 bytes, which is code point order. UTF-16
 * units differ from it only where a surrogate meets U+E000-U+FFFF; this shifts those units into
 * code point order at the first difference.
 */
function byBytes(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return fixup(x) - fixup(y);
  }
  return a.length - b.length;
}

function fixup(unit: number): number {
  if (unit < 0xd800) return unit;
  return unit <= 0xdfff ? unit + 0x2000 : unit - 0x800;
}

/** Busiest first (ready + in flight), then by name: the order stats() promises. */
export function byLoad(a: GroupLoad, b: GroupLoad): number {
  return b.ready + b.running - (a.ready + a.running) || byBytes(a.group, b.group);
}

/**
 * Keeps the `limit` busiest of `groups` (sorted) once it holds twice that many: a reader that
 * streams every group through it holds at most 2 × limit of them, whatever the number of tenants.
 */
export function trimBusiest(groups: GroupLoad[], limit: number, force = false): GroupLoad[] {
  if (!force && groups.length <= 2 * limit) return groups;
  return groups.sort(byLoad).slice(0, limit);
}
