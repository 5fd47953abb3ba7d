import type { GraphNode } from 'nestjs-sql-job-queue';
import type { FetchArgs, TenantArgs } from './report.types';

/** Ref of the per-tenant container, and of the steps, as they appear in `ctx.upstream()` and in the ids. */
export const REPORT_REF = 'report';
export const fetchRef = (source: string) => `fetch:${source}`;
export const parseRef = (source: string) => `parse:${source}`;

/**
 * One tenant's report as a job graph: a container holding fetch → parse per source (fan-out),
 * aggregate over every parse (fan-in), then render → notify. Every node carries the tenant as its
 * fair-share group, so tenants share the workers by weight instead of first come, first served.
 */
export function buildReportGraph(tenant: string, sources: readonly string[]): Array<GraphNode & { ref: string }> {
  const group = tenant;
  const step = (ref: string, type: string, args: FetchArgs | TenantArgs | { source: string }, dependsOn: string[] = []) => ({
    ref,
    type,
    args,
    group,
    parent: REPORT_REF,
    dependsOn,
  });
  return [
    // A container never runs a handler: it finishes when its last child does, so the client
    // waits for one id per pipeline.
    { ref: REPORT_REF, type: 'report', args: { tenant }, group },
    ...sources.map((source) => step(fetchRef(source), 'fetch', { tenant, source })),
    ...sources.map((source) => step(parseRef(source), 'parse', { source }, [fetchRef(source)])),
    step('aggregate', 'aggregate', { tenant }, sources.map(parseRef)),
    step('render', 'render', { tenant }, ['aggregate']),
    step('notify', 'notify', { tenant }, ['render']),
  ];
}
