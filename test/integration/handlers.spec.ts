import { Injectable } from '@nestjs/common';
import { DuplicateJobHandlerError, InvalidJobHandlerError, JobHandler } from '../../lib';
import { describeDialects } from '../support/describe-dialects';
import { startQueueApp } from '../support/queue-app';

@Injectable()
class First {
  @JobHandler('same')
  async one(): Promise<void> {}
}

@Injectable()
class Second {
  @JobHandler('same')
  async two(): Promise<void> {}
}

@Injectable()
class BadOptions {
  @JobHandler('bad', { concurrency: 0 })
  async bad(): Promise<void> {}
}

@Injectable()
class Runner {
  @JobHandler('run')
  async run(): Promise<string> {
    return 'ran';
  }
}

describeDialects('handler discovery', (db) => {
  it('fails bootstrap on a duplicate job type, naming both methods', async () => {
    const boot = startQueueApp(db, {}, [First, Second]);
    await expect(boot).rejects.toBeInstanceOf(DuplicateJobHandlerError);
    await expect(startQueueApp(db, {}, [First, Second])).rejects.toThrow(/'same'\) is declared twice: on First\.one and on Second\.two/);
  });

  it('fails bootstrap on invalid handler options', async () => {
    await expect(startQueueApp(db, {}, [BadOptions])).rejects.toBeInstanceOf(InvalidJobHandlerError);
  });

  it('with worker: false only enqueues; a worker runs what it has handlers for', async () => {
    const producer = await startQueueApp(db, { worker: false, pollIntervalMs: 20 }, [Runner]);
    try {
      const job = await producer.queue.enqueue({ type: 'run' });
      await new Promise((r) => setTimeout(r, 300));
      expect((await producer.queue.get(job.id))!.state).toBe('ready');
      const worker = await startQueueApp(db, { pollIntervalMs: 20 }, [Runner]);
      try {
        expect(await worker.queue.waitFor(job.id, { timeoutMs: 10_000 })).toMatchObject({ state: 'done', result: 'ran' });
      } finally {
        await worker.close();
      }
    } finally {
      await producer.close();
    }
  });
});
