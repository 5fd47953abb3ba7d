import { DEFAULT_SOURCES } from './source.simulator';

export interface PipelineRequest {
  tenant: string;
  sources: string[];
}

/** Thrown for a body that is not a valid pipeline request; the HTTP layer turns it into a 400. */
export class PipelineRequestError extends Error {}

// Tenant and source names become group keys and graph refs: keep them short and printable.
const NAME = /^[a-z0-9][a-z0-9_-]{0,39}$/i;
const MAX_SOURCES = 10;
const FIELDS = ['tenant', 'sources'];

/**
 * Checks a `POST /pipelines` body by hand (the app has no validation library) and fills in the
 * default sources. Each message names the field and what it expects.
 */
export function parsePipelineRequest(body: unknown): PipelineRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new PipelineRequestError('Body must be a JSON object like { "tenant": "acme", "sources": ["crm", "billing"] }.');
  }
  const extra = Object.keys(body).filter((k) => !FIELDS.includes(k));
  if (extra.length) throw new PipelineRequestError(`Unknown field(s) ${extra.map((k) => `"${k}"`).join(', ')}; allowed: tenant, sources.`);
  const { tenant, sources } = body as Record<string, unknown>;
  if (typeof tenant !== 'string' || !NAME.test(tenant)) {
    throw new PipelineRequestError(`"tenant" must be 1-40 letters, digits, "-" or "_"; received ${show(tenant)}.`);
  }
  if (sources === undefined) return { tenant, sources: [...DEFAULT_SOURCES] };
  if (!Array.isArray(sources) || sources.length === 0 || sources.length > MAX_SOURCES) {
    throw new PipelineRequestError(`"sources" must be an array of 1 to ${MAX_SOURCES} source names; received ${show(sources)}.`);
  }
  for (const source of sources) {
    if (typeof source !== 'string' || !NAME.test(source)) {
      throw new PipelineRequestError(`Each of "sources" must be 1-40 letters, digits, "-" or "_"; received ${show(source)}.`);
    }
  }
  if (new Set(sources).size !== sources.length) throw new PipelineRequestError('"sources" must not repeat a name.');
  return { tenant, sources: sources as string[] };
}

function show(value: unknown): string {
  const text = JSON.stringify(value);
  return text === undefined ? String(value) : text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
