/** A tiny HTTP client for the sample app, on Node's global fetch. */
export interface Reply<T = any> {
  status: number;
  body: T;
}

export class SampleAppClient {
  constructor(readonly base: string) {}

  get<T = any>(path: string): Promise<Reply<T>> {
    return this.send('GET', path);
  }

  /** `body` is sent as JSON; a string is sent verbatim, to test malformed JSON. */
  post<T = any>(path: string, body?: unknown): Promise<Reply<T>> {
    return this.send('POST', path, body);
  }

  /** Polls GET /jobs/:id until `done(job)` holds; `seen` receives every reply on the way. */
  async until<T = any>(id: number, done: (job: T) => boolean, seen: (job: T) => void = () => undefined, timeoutMs = 15_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { status, body } = await this.get<T>(`/jobs/${id}`);
      if (status !== 200) throw new Error(`GET /jobs/${id} answered ${status}: ${JSON.stringify(body)}`);
      seen(body);
      if (done(body)) return body;
      if (Date.now() > deadline) throw new Error(`job ${id} still ${JSON.stringify(body)} after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  private async send<T>(method: string, path: string, body?: unknown): Promise<Reply<T>> {
    const res = await fetch(this.base + path, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  }
}

export const isFinished = (job: { state: string }) => ['done', 'failed', 'cancelled'].includes(job.state);
