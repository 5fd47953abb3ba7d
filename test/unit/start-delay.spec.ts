import { AttemptController } from '../../lib/handlers/attempt-controller';
import { waitForStart } from '../../lib/handlers/start-delay';

describe('waitForStart (a job a rate window admitted ahead of its reopening)', () => {
  it('resolves true no earlier than its start time, and at once for a time already past', async () => {
    const at = Date.now() + 60;
    expect(await waitForStart(at, new AttemptController())).toBe(true);
    expect(Date.now()).toBeGreaterThanOrEqual(at);
    const before = Date.now();
    expect(await waitForStart(before - 1_000, new AttemptController())).toBe(true);
    expect(Date.now() - before).toBeLessThan(50);
  });

  it('resolves false as soon as the attempt is aborted (cancelled, shutdown), so its handler never starts', async () => {
    const controller = new AttemptController();
    const started = Date.now();
    const waiting = waitForStart(started + 5_000, controller);
    setTimeout(() => controller.abort(new Error('cancelled')), 20);
    expect(await waiting).toBe(false);
    expect(Date.now() - started).toBeLessThan(1_000);
    // Already aborted: false without waiting.
    expect(await waitForStart(Date.now() + 5_000, controller)).toBe(false);
  });

  it('leaves the controller free for the attempt: its own abort listener, registered after the wait, still fires', async () => {
    const controller = new AttemptController();
    expect(await waitForStart(Date.now() + 10, controller)).toBe(true);
    let heard: unknown;
    controller.onAbort((reason) => (heard = reason));
    controller.abort('stop');
    expect(heard).toBe('stop');
  });
});
