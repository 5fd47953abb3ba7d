import { openPlainjobQueue, startPlainjobWorkers } from '../lib/peers/plainjob';
import { childOptions, memory, runChild, send, serveParent } from './worker-ipc';

/** A plainjob worker process: `workers` plainjob workers on one queue over the given file. */
interface PlainjobWorkerOptions {
  file: string;
  workers: number;
  pollIntervall: number;
}

runChild(async () => {
  const o = childOptions<PlainjobWorkerOptions>();
  const { queue, close } = openPlainjobQueue(o.file);
  const workers = startPlainjobWorkers(queue, o.workers, o.pollIntervall);
  serveParent(async () => {
    await workers.stop();
    close();
  });
  send({ type: 'ready', pid: process.pid, ...memory() });
});
