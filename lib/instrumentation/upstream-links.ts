/**
 * Upstream carriers read per attempt, the lowest job ids first. With the link to its creation
 * that makes 128, OpenTelemetry's default limit of links per span (SpanLimits.linkCountLimit): the
 * SDK dropped any more, after the queue had read and parsed every one of them.
 */
export const MAX_UPSTREAM_LINKS = 127;
