import type { JobArgsIssue } from '../errors/validation.errors';
import type { StandardSchemaV1 } from '../typing/standard-schema';

/**
 * Runs a Standard Schema on one job's args. Resolves with the schema's output value, or with
 * the issues found, each with a readable path (`args.items[2].sku`). Synchronous schemas stay
 * synchronous in effect: only a schema that returns a promise is awaited.
 */
export async function checkArgs(
  schema: StandardSchemaV1,
  args: unknown,
  type: string,
  ref?: string,
): Promise<{ value: unknown; issues?: undefined } | { issues: JobArgsIssue[] }> {
  let result = schema['~standard'].validate(args);
  if (result instanceof Promise) result = await result;
  if (!result.issues) return { value: result.value };
  return {
    issues: result.issues.map((issue) => ({
      ...(ref === undefined ? {} : { ref }),
      type,
      path: formatPath(issue.path),
      message: issue.message,
    })),
  };
}

/** `['items', 2, 'sku']` → `args.items[2].sku`. */
export function formatPath(path: StandardSchemaV1.Issue['path']): string {
  let out = 'args';
  for (const segment of path ?? []) {
    const key = typeof segment === 'object' && segment !== null ? segment.key : segment;
    if (typeof key === 'number') out += `[${key}]`;
    else if (typeof key === 'string' && /^[A-Za-z_$][\w$]*$/.test(key)) out += `.${key}`;
    else out += `[${JSON.stringify(String(key))}]`;
  }
  return out;
}
