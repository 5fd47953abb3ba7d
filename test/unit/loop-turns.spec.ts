import { LoopTurns } from '../../lib/database/loop-turns';

describe('LoopTurns', () => {
  it('a loop of awaited synchronous work lets timers run once it has held the loop for maxMs', async () => {
    let clock = 0;
    const turns = new LoopTurns(20, () => clock);
    // Counts the loop's turns: each turn's check phase runs one and queues the next.
    let fired = 0;
    let counting = true;
    const count = () => {
      fired++;
      if (counting) setImmediate(count);
    };
    setImmediate(count);
    try {
      // 100 "statements" of 5 ms each, answered at once (as SQLite's are): 500 ms of the loop.
      for (let i = 0; i < 100; i++) {
        await turns.beforeStatement();
        clock += 5;
      }
      // A turn every 20 ms of held loop: about 25 turns; without them, none.
      expect(fired).toBeGreaterThanOrEqual(20);
      expect(fired).toBeLessThanOrEqual(30);
    } finally {
      counting = false;
    }
  });

  it('costs no turn to statements that do not hold the loop (each after a turn of its own)', async () => {
    let clock = 0;
    const turns = new LoopTurns(20, () => clock);
    for (let i = 0; i < 10; i++) {
      clock += 1_000; // idle between statements, the loop turning meanwhile
      await new Promise((r) => setTimeout(r, 1));
      let yielded = false;
      const started = turns.beforeStatement().then(() => (yielded = true));
      await Promise.resolve();
      // Settled on the microtask queue: no wait for a turn.
      expect(yielded).toBe(true);
      await started;
    }
  });
});
