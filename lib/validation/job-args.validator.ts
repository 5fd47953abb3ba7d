import { Injectable } from '@nestjs/common';
import { JobArgsInvalidError, type JobArgsIssue } from '../errors/validation.errors';
import { JobHandlerRegistry } from '../handlers/job-handler.registry';
import { checkArgs } from './args-issues';

/**
 * Checks enqueued args against the Standard Schema of their type's `@JobHandler`, when this
 * process has that handler. Every node of a graph is checked and every issue reported in one
 * `JobArgsInvalidError`, before anything is written. Types without a local schema pass: their
 * worker checks again before running (see `withArgsSchema`).
 */
@Injectable()
export class JobArgsValidator {
  constructor(private readonly registry: JobHandlerRegistry) {}

  async assertValid(nodes: ReadonlyArray<{ type?: unknown; args?: unknown; ref?: unknown }>, withRefs: boolean): Promise<void> {
    const issues: JobArgsIssue[] = [];
    for (const node of nodes) {
      if (typeof node !== 'object' || node === null || typeof node.type !== 'string') continue; // normalizeJob reports it
      const schema = this.registry.get(node.type)?.options.schema;
      if (!schema) continue;
      const ref = withRefs && typeof node.ref === 'string' ? node.ref : undefined;
      const checked = await checkArgs(schema, node.args, node.type, ref);
      if (checked.issues) issues.push(...checked.issues);
    }
    if (issues.length) throw new JobArgsInvalidError(issues);
  }
}
