import { InvalidCursorError, InvalidQueryError } from '../../lib';
import { describeDialects } from '../support/describe-dialects';
import { startQueueApp, type QueueApp } from '../support/queue-app';

/** Names whose order a careless keyset would get wrong: a prefix, a newline, quotes, non-ASCII. */
const ODD = ['a', 'a\nb', 'a b', "o'brien", 'zürich', '"q"', 'a-1', 'a\n'];

describeDialects('findPaused: pages of what is paused', (db) => {
  let app: QueueApp;

  beforeAll(async () => {
    app = await startQueueApp(db, { worker: false, externalTypes: ['mail'] });
  });
  afterAll(async () => {
    await app?.close();
  });
  beforeEach(async () => {
    await app.rows(`DELETE FROM job_queue_paused`);
  });

  async function walk(filter: Parameters<QueueApp['queue']['findPaused']>[0], limit: number) {
    const seen: Array<{ type?: string; group?: string }> = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await app.queue.findPaused(filter, { limit, cursor });
      expect(page.paused.length).toBeLessThanOrEqual(limit);
      for (const p of page.paused) seen.push(p.type !== undefined ? { type: p.type } : { group: p.group });
      cursor = page.nextCursor;
      // A cursor that does not move on would page forever: fail instead.
      if (++pages > 1_000) throw new Error(`still paging after ${pages} pages of ${limit}`);
    } while (cursor);
    return { seen, pages };
  }

  it('pages through every pause once, groups then types in listPaused order, with pausedAt; kind narrows it', async () => {
    const before = Date.now();
    for (const name of ODD) await app.queue.pause({ group: name });
    for (let i = 0; i < 23; i++) await app.queue.pause({ group: `tenant-${String(i).padStart(2, '0')}` });
    for (const type of ['sms', 'mail', 'push']) await app.queue.pause({ type });
    const all = await app.queue.listPaused();
    expect(all).toHaveLength(ODD.length + 23 + 3);

    for (const limit of [1, 7, 50, 500]) {
      const { seen, pages } = await walk(undefined, limit);
      expect(seen).toEqual(all);
      expect(pages).toBe(Math.max(1, Math.ceil(all.length / limit)));
    }
    const groups = await walk({ kind: 'group' }, 5);
    expect(groups.seen).toEqual(all.filter((p) => p.group !== undefined));
    const types = await walk({ kind: 'type' }, 2);
    expect(types.seen).toEqual([{ type: 'mail' }, { type: 'push' }, { type: 'sms' }]);

    const first = await app.queue.findPaused({ kind: 'type' }, { limit: 1 });
    expect(first.paused).toEqual([{ type: 'mail', pausedAt: expect.any(Date) }]);
    // The database's clock, stored to the millisecond (SQLite's and MariaDB's text/DATETIME(3)).
    expect(first.paused[0].pausedAt.getTime()).toBeGreaterThanOrEqual(before - 2_000);
    expect(first.paused[0].pausedAt.getTime()).toBeLessThanOrEqual(Date.now() + 2_000);
    expect(await app.queue.findPaused()).toEqual({ paused: expect.any(Array), nextCursor: null });
  });

  it('a walk while pauses come and go: no entry twice, none that stayed is missed', async () => {
    for (let i = 0; i < 40; i++) await app.queue.pause({ group: `g${String(i).padStart(2, '0')}` });
    const seen: string[] = [];
    let cursor: string | null = null;
    let round = 0;
    do {
      const page = await app.queue.findPaused({ kind: 'group' }, { limit: 6, cursor });
      seen.push(...page.paused.map((p) => p.group!));
      cursor = page.nextCursor;
      // Behind the walk and ahead of it: one removed, one added each page.
      await app.queue.resume({ group: `g${String(39 - round).padStart(2, '0')}` });
      await app.queue.pause({ group: `a${round}` });
      if (++round > 100) throw new Error(`still paging after ${round} pages`);
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    const stayed = Array.from({ length: 40 }, (_, i) => `g${String(i).padStart(2, '0')}`).filter((g) => !seen.includes(g));
    // Every group not found was resumed before the walk reached it; the added ones sort before it.
    for (const g of stayed) expect(Number(g.slice(1))).toBeGreaterThanOrEqual(40 - round);
    expect(seen.some((g) => g.startsWith('a'))).toBe(false);
  });

  it('bad filters, limits and cursors throw typed errors and read nothing', async () => {
    await app.queue.pause({ group: 'acme' });
    await app.queue.pause({ group: 'beta' });
    const bad: Array<[unknown, unknown]> = [
      [{ kind: 'tenant' }, undefined],
      [{ group: 'acme' }, undefined],
      ['group', undefined],
      [[], undefined],
      [undefined, { limit: 0 }],
      [undefined, { limit: 501 }],
      [undefined, { limit: 2.5 }],
      [undefined, { page: 2 }],
      [undefined, { cursor: 42 }],
    ];
    for (const [filter, options] of bad) {
      await expect(app.queue.findPaused(filter as never, options as never)).rejects.toBeInstanceOf(InvalidQueryError);
    }
    const page = await app.queue.findPaused({ kind: 'group' }, { limit: 1 });
    expect(page.nextCursor).toEqual(expect.any(String));
    // Another filter's cursor, an edited one, one of find() or findSchedules(), garbage.
    await expect(app.queue.findPaused({ kind: 'type' }, { cursor: page.nextCursor })).rejects.toBeInstanceOf(InvalidCursorError);
    await expect(app.queue.findPaused(undefined, { cursor: page.nextCursor })).rejects.toBeInstanceOf(InvalidCursorError);
    const edited = Buffer.from(Buffer.from(page.nextCursor!, 'base64url').toString('utf8').replace(/^k\.[^.]+/, `k.${Buffer.from('group\nzzz').toString('base64url')}`)).toString('base64url');
    await expect(app.queue.findPaused({ kind: 'group' }, { cursor: edited })).rejects.toBeInstanceOf(InvalidCursorError);
    await app.queue.enqueue({ type: 'mail', args: {} });
    await app.queue.enqueue({ type: 'mail', args: {} });
    const jobsCursor = (await app.queue.find({}, { limit: 1 })).nextCursor!;
    await expect(app.queue.findPaused(undefined, { cursor: jobsCursor })).rejects.toBeInstanceOf(InvalidCursorError);
    for (const garbage of ['', '%%%', 'x'.repeat(2_000)]) {
      await expect(app.queue.findPaused(undefined, { cursor: garbage })).rejects.toBeInstanceOf(InvalidQueryError);
    }
    expect(await app.queue.listPaused()).toEqual([{ group: 'acme' }, { group: 'beta' }]);
  });
});
