import { InvalidQueryError, JobNotFoundError } from '../../lib';
import { buildReportGraph } from '../../sample-app/reports/report.graph';
import { MAX_GRAPH_BYTES } from '../../lib/query/job-query.service';
import { describeDialects } from '../support/describe-dialects';
import { resetTables, startQueueApp, type QueueApp } from '../support/queue-app';

const TYPES = ['report', 'fetch', 'parse', 'aggregate', 'render', 'notify', 'n'];

describeDialects('getGraph: the whole connected graph, bounded', (db) => {
  let app: QueueApp;

  beforeAll(async () => {
    app = await startQueueApp(db, { worker: false, externalTypes: TYPES });
  });
  afterAll(() => app?.close());
  beforeEach(() => resetTables(app));

  it('a job of the sample pipeline: the container, every step, every dependency edge, nothing else', async () => {
    const ids = await app.queue.enqueueGraph(buildReportGraph('acme', ['a', 'b', 'c']));
    const other = await app.queue.enqueueGraph(buildReportGraph('globex', ['a']));
    const expectedEdges = [
      ...['a', 'b', 'c'].map((s) => ({ from: ids[`fetch:${s}`], to: ids[`parse:${s}`] })),
      ...['a', 'b', 'c'].map((s) => ({ from: ids[`parse:${s}`], to: ids.aggregate })),
      { from: ids.aggregate, to: ids.render },
      { from: ids.render, to: ids.notify },
    ].sort((x, y) => x.from - y.from || x.to - y.to);
    for (const start of [ids['parse:b'], ids.report, ids.notify]) {
      const g = await app.queue.getGraph(start);
      expect(g.truncated).toBe(false);
      expect(g.nodes.map((n) => n.id)).toEqual(Object.values(ids).sort((a, b) => a - b));
      expect(g.edges).toEqual(expectedEdges);
      expect(g.nodes.filter((n) => n.id !== ids.report).every((n) => n.parentId === ids.report)).toBe(true);
      expect(g.nodes.find((n) => n.id === ids.report)).toMatchObject({ isContainer: true, type: 'report', group: 'acme' });
    }
    const single = await app.queue.enqueue({ type: 'n' });
    expect(await app.queue.getGraph(single.id)).toEqual({ nodes: [expect.objectContaining({ id: single.id })], edges: [], truncated: false });
    expect((await app.queue.getGraph(other.report)).nodes).toHaveLength(6);
  });

  it('a 5,000-node fan-out/fan-in, from the root, a middle node and the sink', async () => {
    const width = 4_998;
    const ids = await app.queue.enqueueGraph([
      { ref: 'root', type: 'n' },
      ...Array.from({ length: width }, (_, i) => ({ ref: `m${i}`, type: 'n', dependsOn: ['root'] })),
      { ref: 'sink', type: 'n', dependsOn: Array.from({ length: width }, (_, i) => `m${i}`) },
    ]);
    for (const start of [ids.root, ids.m2500, ids.sink]) {
      const g = await app.queue.getGraph(start);
      expect(g.truncated).toBe(false);
      expect(g.nodes).toHaveLength(5_000);
      expect(g.edges).toHaveLength(2 * width);
      expect(g.edges.filter((e) => e.from === ids.root)).toHaveLength(width);
      expect(g.edges.filter((e) => e.to === ids.sink)).toHaveLength(width);
    }
  });

  it('stops at 10,000 nodes and says so', async () => {
    const root = await app.queue.enqueue({ type: 'n' });
    for (let i = 0; i < 10_050; i += 1_000) {
      const n = Math.min(1_000, 10_050 - i);
      await app.queue.enqueueGraph(Array.from({ length: n }, (_, k) => ({ ref: `x${k}`, type: 'n', dependsOn: [root.id] })));
    }
    const g = await app.queue.getGraph(root.id);
    expect(g.truncated).toBe(true);
    expect(g.nodes).toHaveLength(10_000);
    expect(g.nodes.some((n) => n.id === root.id)).toBe(true);
    expect(g.edges).toHaveLength(9_999); // root → each of the other nodes returned
  });

  it(`stops where the nodes' args come to ${MAX_GRAPH_BYTES / 1024 / 1024} MB, keeping the nearest, and says so`, async () => {
    // 90 children of 1 MB args in a container; the args are written by the server, not sent.
    const ids = await app.queue.enqueueGraph([{ ref: 'box', type: 'report' }, ...Array.from({ length: 90 }, (_, k) => ({ ref: `c${k}`, type: 'n', parent: 'box' }))]);
    const pad = { postgres: `repeat('x', 1000000)`, mysql: `REPEAT('x', 1000000)`, sqlite: `printf('%.*c', 1000000, 'x')` }[db.dialect];
    const json = db.dialect === 'mysql' ? `CONCAT('{"pad":"', ${pad}, '"}')` : `'{"pad":"' || ${pad} || '"}'`;
    await app.rows(`UPDATE jobs SET args = ${json} WHERE parent_id = ${ids.box}`);
    const g = await app.queue.getGraph(ids.c0);
    expect(g.truncated).toBe(true);
    const bytes = g.nodes.reduce((n, node) => n + JSON.stringify(node.args ?? null).length, 0);
    expect(bytes).toBeLessThanOrEqual(MAX_GRAPH_BYTES + 1_000_100);
    expect(g.nodes.length).toBeGreaterThanOrEqual(Math.floor(MAX_GRAPH_BYTES / 1_000_100));
    expect(g.nodes.length).toBeLessThan(91);
    // The job and its container first, then the nearest siblings (by id).
    const kept = new Set(g.nodes.map((n) => n.id));
    expect(kept.has(ids.c0) && kept.has(ids.box)).toBe(true);
    const siblings = Array.from({ length: 90 }, (_, k) => ids[`c${k}`]);
    expect(siblings.filter((id) => kept.has(id))).toEqual(siblings.slice(0, g.nodes.length - 1));
  }, 60_000);

  it('an unknown id throws JobNotFoundError, a bad one InvalidQueryError', async () => {
    await expect(app.queue.getGraph(2_000_000_000)).rejects.toBeInstanceOf(JobNotFoundError);
    await expect(app.queue.getGraph(0)).rejects.toBeInstanceOf(InvalidQueryError);
    await expect(app.queue.getGraph('7' as never)).rejects.toBeInstanceOf(InvalidQueryError);
  });
});
