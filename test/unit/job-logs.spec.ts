import { jest } from '@jest/globals';
import { JobContext, type JobContextIO } from '../../lib/handlers/job-context';
import { logLimitNotice, logMessageText, logStatements, MAX_LOG_MESSAGE_LENGTH, type PendingLogLine } from '../../lib/logs/log-line';
import { LogWrites } from '../../lib/logs/log-writes';
import { LogDrops } from '../../lib/logs/log-drops';

function contextWith(maxLogLines: number) {
  const lines: PendingLogLine[] = [];
  const io: JobContextIO = { progress: async () => undefined, upstream: async () => ({}), upstreamFailures: async () => ({}), log: (_id, line) => void lines.push(line), maxLogLines };
  const ctx = new JobContext({ id: 7, type: 't', attempts: 2, maxAttempts: 3, group: 'default', parentId: null }, new AbortController(), io);
  return { ctx, lines };
}

describe('logMessageText (pure)', () => {
  it('stores any value as String() gives it, cut between characters, unstorable characters replaced', () => {
    expect(logMessageText('plain')).toBe('plain');
    expect(logMessageText(42)).toBe('42');
    expect(logMessageText({ a: 1 })).toBe('[object Object]');
    expect(logMessageText(null)).toBe('null');
    expect(logMessageText('a\u0000b\uD800c')).toBe('a\uFFFDb\uFFFDc');
    const long = 'x'.repeat(MAX_LOG_MESSAGE_LENGTH - 1) + '😀' + 'tail';
    const cut = logMessageText(long);
    expect(cut).toBe('x'.repeat(MAX_LOG_MESSAGE_LENGTH - 1)); // the pair would straddle the limit: left out whole
    expect(logMessageText('y'.repeat(100_000))).toHaveLength(MAX_LOG_MESSAGE_LENGTH);
  });

  it('never throws, even for a value whose toString throws', () => {
    const hostile = { toString: () => { throw new Error('no'); } };
    expect(logMessageText(hostile)).toBe('[object Object]');
    expect(logMessageText(Symbol('s'))).toBe('Symbol(s)');
  });
});

describe('logStatements (pure)', () => {
  const line = (message: string) => ({ message });
  it('cuts by line count and by characters, keeping order, a long line always in a statement of its own', () => {
    const lines = Array.from({ length: 7 }, (_, i) => line(String(i)));
    expect(logStatements(lines, 3, 1_000).map((p) => p.map((l) => l.message).join(''))).toEqual(['012', '345', '6']);
    const sized = [line('aaaa'), line('bb'), line('cccccccccc'), line('d')];
    expect(logStatements(sized, 100, 6).map((p) => p.map((l) => l.message))).toEqual([['aaaa', 'bb'], ['cccccccccc'], ['d']]);
    expect(logStatements([], 3, 10)).toEqual([]);
  });
});

describe('JobContext.log', () => {
  it('queues each line with the attempt and the time of the call', () => {
    const { ctx, lines } = contextWith(10);
    const before = Date.now();
    ctx.log('first');
    ctx.log('second');
    expect(lines.map((l) => [l.attempt, l.message])).toEqual([[2, 'first'], [2, 'second']]);
    expect(lines[0].at.getTime()).toBeGreaterThanOrEqual(before);
    expect(lines[0].at.getTime()).toBeLessThanOrEqual(Date.now());
  });

  it('stores maxLogLines lines, then one notice, then nothing', () => {
    const { ctx, lines } = contextWith(3);
    for (let i = 0; i < 10_000; i++) ctx.log(`line ${i}`);
    expect(lines.map((l) => l.message)).toEqual(['line 0', 'line 1', 'line 2', logLimitNotice(3)]);
  });

  it('stores nothing at maxLogLines 0, not even the notice', () => {
    const { ctx, lines } = contextWith(0);
    ctx.log('x');
    ctx.log('y');
    expect(lines).toEqual([]);
  });
});

describe('LogWrites', () => {
  const at = new Date(0);
  const l = (message: string): PendingLogLine => ({ attempt: 1, at, message });

  it('writes a synchronous burst in one statement, and lines logged during a write in the next', async () => {
    const writes: Array<[number, string[]]> = [];
    let release!: () => void;
    const first = new Promise<void>((resolve) => (release = resolve));
    const w = new LogWrites(async (id, lines) => {
      writes.push([id, lines.map((x) => x.message)]);
      if (writes.length === 1) await first;
    }, () => undefined);
    for (let i = 0; i < 100; i++) w.append(1, l(`a${i}`));
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toHaveLength(1);
    w.append(1, l('b0'));
    w.append(1, l('b1'));
    w.append(2, l('other job'));
    const settled = w.settled(1)!;
    release();
    await settled;
    expect(writes.filter(([id]) => id === 1)).toEqual([[1, Array.from({ length: 100 }, (_, i) => `a${i}`)], [1, ['b0', 'b1']]]);
    await w.settled(2);
    expect(writes.filter(([id]) => id === 2)).toEqual([[2, ['other job']]]);
    expect(w.settled(1)).toBeUndefined();
  });

  it('reports a failed write, drops its lines and goes on with the next', async () => {
    const failures: Array<[number, number, string]> = [];
    const written: string[] = [];
    let calls = 0;
    const w = new LogWrites(async (_id, lines) => {
      if (++calls === 1) throw new Error('database gone');
      written.push(...lines.map((x) => x.message));
    }, (id, n, err) => failures.push([id, n, (err as Error).message]));
    w.append(5, l('lost 1'));
    w.append(5, l('lost 2'));
    const settled = w.settled(5)!;
    await new Promise((resolve) => setImmediate(resolve));
    await settled;
    w.append(5, l('kept'));
    await w.settled(5);
    expect(failures).toEqual([[5, 2, 'database gone']]);
    expect(written).toEqual(['kept']);
  });
});

describe('LogDrops', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('warns of the first drop at once, then sums up the rest at most once per interval, and at flush()', () => {
    const warnings: string[] = [];
    const drops = new LogDrops((m) => warnings.push(m), 10_000, () => Date.now());
    drops.dropped(1, 3, new Error('connect ECONNREFUSED'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/could not store 3 log line\(s\) of job 1 \(connect ECONNREFUSED\)/);
    // An outage: a thousand failed writes of 5 jobs within the interval.
    for (let i = 0; i < 1_000; i++) drops.dropped(1 + (i % 5), 1, new Error('connect ECONNREFUSED'));
    expect(warnings).toHaveLength(1);
    jest.advanceTimersByTime(10_000);
    expect(warnings).toHaveLength(2);
    expect(warnings[1]).toMatch(/1000 more log line\(s\) of 5 job\(s\) \(last: connect ECONNREFUSED\)/);
    drops.dropped(9, 2, 'pool closed');
    drops.flush();
    expect(warnings[2]).toMatch(/2 more log line\(s\) of 1 job\(s\) \(last: pool closed\)/);
    drops.flush();
    expect(warnings).toHaveLength(3);
    // Quiet long enough: the next drop is reported at once again.
    jest.advanceTimersByTime(10_000);
    drops.dropped(4, 1, new Error('back'));
    expect(warnings).toHaveLength(4);
  });
});
