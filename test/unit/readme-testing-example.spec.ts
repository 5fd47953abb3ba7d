import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The README's "Testing your handlers" example must be the spec that runs, not a copy that drifts. */
describe('README testing example', () => {
  it('is test/examples/testing-your-handlers.spec.ts, minus its first comment line', () => {
    const readme = readFileSync(join(process.cwd(), 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## Testing your handlers'));
    const block = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
    const spec = readFileSync(join(process.cwd(), 'test/examples/testing-your-handlers.spec.ts'), 'utf8').split('\n').slice(1).join('\n');
    expect(block?.trimEnd()).toBe(spec.trimEnd());
  });
});
