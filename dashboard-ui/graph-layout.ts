import ELK from 'elkjs/lib/elk-api.js';
import type { ElkNode } from 'elkjs/lib/elk-api';
import { BASE } from './api';

/**
 * ELK in a Web Worker, started by the first graph drawn. In the page's bundle its 1.6 MB were
 * evaluated before any page could paint (about 2 s here, the overview included), and a
 * 1,000-node layout held the page's thread for seconds. The worker is the same-origin asset
 * `elk-worker.js`, so the page's CSP (`script-src 'self'`) admits it.
 */
let engine: { elk: InstanceType<typeof ELK>; failed: Promise<never> } | null = null;

export function layOut(graph: ElkNode): Promise<ElkNode> {
  if (!engine) {
    let fail: (err: Error) => void = () => undefined;
    const failed = new Promise<never>((_, reject) => (fail = reject));
    failed.catch(() => undefined); // a worker that never fails leaves this pending, unobserved
    const elk = new ELK({
      workerFactory: (url) => {
        const worker = new Worker(url!);
        // elkjs never rejects on a worker that did not load (a 401, a CSP refusal): its layouts would wait for good.
        worker.addEventListener('error', (ev) => {
          worker.terminate();
          engine = null; // the next refresh starts a new one
          fail(new Error(`the graph layout worker failed${ev.message ? `: ${ev.message}` : ' to load'}`));
        });
        return worker;
      },
      workerUrl: `${BASE}/assets/elk-worker.js`,
    });
    engine = { elk, failed };
  }
  return Promise.race([engine.elk.layout(graph), engine.failed]);
}
