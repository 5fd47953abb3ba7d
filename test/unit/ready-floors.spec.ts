import { addFloor, readFloorRows, type ReadyFloor } from '../../lib/claim/ready-by-type.sql';

describe('readFloorRows (MySQL floors from type heads)', () => {
  const at = '2026-12-04 01:02:03.456';
  it('a due head is the floor; a head above priority 0 not due is looked below; a head at 0 not due means nothing is due', () => {
    const { floors, delayed } = readFloorRows([
      { type: 'busy', neg_priority: -2, run_after_text: at, id: 7, due: 1 },
      { type: 'reminders', neg_priority: -3, run_after_text: at, id: 8, due: 0 },
      { type: 'later', neg_priority: 0, run_after_text: at, id: 9, due: 0 },
    ]);
    expect(floors).toEqual(new Map([['busy', { negPriority: -2, runAfter: at, id: 7 }]]));
    expect(delayed).toEqual(new Map([['reminders', -3]]));
  });

  it('unpacks the correlated form: "neg_priority id due run_after", run_after with its own space', () => {
    const { floors, delayed } = readFloorRows([
      { type: 'a', head: `0 12 1 ${at}` },
      { type: 'b', head: `-4 13 0 ${at}` },
      { type: 'c', head: null },
    ]);
    expect(floors).toEqual(new Map([['a', { negPriority: 0, runAfter: at, id: 12 }]]));
    expect(delayed).toEqual(new Map([['b', -4]]));
  });

  it('keeps the earlier floor of a type in claim order (priority, then due time, then id)', () => {
    const floors = new Map<string, ReadyFloor>();
    addFloor(floors, 't', { negPriority: 0, runAfter: at, id: 5 });
    addFloor(floors, 't', { negPriority: -1, runAfter: '2026-12-05 00:00:00.000', id: 9 });
    addFloor(floors, 't', { negPriority: -1, runAfter: at, id: 11 });
    addFloor(floors, 't', { negPriority: -1, runAfter: at, id: 10 });
    expect(floors.get('t')).toEqual({ negPriority: -1, runAfter: at, id: 10 });
  });
});
