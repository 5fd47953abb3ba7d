/** Arguments and results of the report steps; results reach the next step through ctx.upstream(). */
export interface FetchArgs {
  tenant: string;
  source: string;
}
export interface FetchResult {
  source: string;
  rows: number[];
}
export interface ParseResult {
  source: string;
  count: number;
  total: number;
}
export interface AggregateResult {
  tenant: string;
  count: number;
  total: number;
  bySource: Record<string, number>;
}
export interface RenderResult {
  url: string;
  pages: number;
  total: number;
}
export interface NotifyResult {
  to: string;
  url: string;
  total: number;
}
export interface TenantArgs {
  tenant: string;
}
