import { loadSampleConfig } from '../../sample-app/config/sample.config';

/** The sample app's environment handling: DATABASE_URL picks the dialect, with no code change. */
describe('sample app config', () => {
  it('defaults to the embedded SQLite file, port 3000 and the demo', () => {
    expect(loadSampleConfig({})).toMatchObject({ queue: { dialect: 'sqlite', url: './jobs.sqlite', concurrency: 4 }, port: 3000, demo: true });
  });

  it.each([
    ['postgres://u@h:5432/db', 'postgres', 'postgres://u@h:5432/db'],
    ['postgresql://u@h/db', 'postgres', 'postgresql://u@h/db'],
    ['mysql://root@h:3306/db', 'mysql', 'mysql://root@h:3306/db'],
    ['mariadb://root@h/db', 'mysql', 'mariadb://root@h/db'],
    ['sqlite:./data/q.sqlite', 'sqlite', './data/q.sqlite'],
    ['sqlite:///tmp/q.sqlite', 'sqlite', '/tmp/q.sqlite'],
    ['sqlite:/tmp/q.sqlite', 'sqlite', '/tmp/q.sqlite'],
  ])('DATABASE_URL=%s selects %s', (url, dialect, location) => {
    expect(loadSampleConfig({ DATABASE_URL: url }).queue).toMatchObject({ dialect, url: location });
  });

  it('refuses other schemes with a message that names the choices and hides the rest of the URL', () => {
    expect(() => loadSampleConfig({ DATABASE_URL: 'redis://u:s3cret@h/0' })).toThrow(/unsupported scheme "redis:"; use postgres:\/\//);
    expect(() => loadSampleConfig({ DATABASE_URL: 'redis://u:s3cret@h/0' })).not.toThrow(/s3cret/);
    expect(() => loadSampleConfig({ DATABASE_URL: 'jobs.sqlite' })).toThrow(/has no scheme/);
  });

  it('reads SAMPLE_TRACING: off unless console or file:<path>', () => {
    for (const off of [undefined, '', '0', 'off', 'false']) expect(loadSampleConfig({ SAMPLE_TRACING: off }).tracing).toBeNull();
    expect(loadSampleConfig({ SAMPLE_TRACING: 'console' }).tracing).toEqual({ exporter: 'console' });
    expect(loadSampleConfig({ SAMPLE_TRACING: 'file:./spans.jsonl' }).tracing).toEqual({ exporter: 'file', path: './spans.jsonl' });
    expect(() => loadSampleConfig({ SAMPLE_TRACING: 'otlp' })).toThrow(/SAMPLE_TRACING must be console, file:<path>/);
    expect(() => loadSampleConfig({ SAMPLE_TRACING: 'file:' })).toThrow(/SAMPLE_TRACING must be/);
  });

  it('reads PORT and SAMPLE_DEMO', () => {
    expect(loadSampleConfig({ PORT: '8080', SAMPLE_DEMO: '0' })).toMatchObject({ port: 8080, demo: false });
    expect(() => loadSampleConfig({ PORT: 'http' })).toThrow(/PORT must be an integer/);
  });
});
