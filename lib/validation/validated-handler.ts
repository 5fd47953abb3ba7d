import type { JobHandlerFn } from '../handlers/job-handler.registry';
import { UnrecoverableJobError } from '../handlers/job-abort.errors';
import { JobArgsInvalidError } from '../errors/validation.errors';
import type { StandardSchemaV1 } from '../typing/standard-schema';
import { checkArgs } from './args-issues';

/**
 * A handler that checks its args against the schema before running and passes the schema's
 * output (defaults applied) to the method. Args can reach a worker unchecked (enqueued by a
 * process without this handler, or written before the schema changed); they fail the job for
 * good, since a retry would see the same args.
 */
export function withArgsSchema(type: string, schema: StandardSchemaV1, handle: JobHandlerFn): JobHandlerFn {
  return async (args, ctx) => {
    const checked = await checkArgs(schema, args, type);
    if (checked.issues) {
      const invalid = new JobArgsInvalidError(checked.issues);
      throw new UnrecoverableJobError(`${invalid.name}: ${invalid.message}`);
    }
    return handle(checked.value, ctx);
  };
}
