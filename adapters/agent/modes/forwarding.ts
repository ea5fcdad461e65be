import { encodeBody, type TrafficRecord } from '../../../kernel/domain/index.js';
import { randomBase62 } from '../../../kernel/ids.js';
import type { Exchange } from '../exchange.js';
import { recordHeaders } from '../exchange.js';
import type { ForwardOutcome } from '../forward.js';

/** The traffic record of a forwarded exchange. */
export function trafficRecord(ex: Exchange, outcome: ForwardOutcome, maxBodyBytes: number): TrafficRecord {
  const truncated = ex.bodyTruncated || ex.body.length > maxBodyBytes;
  return {
    id: `tr_${randomBase62(20)}`,
    tenant: ex.tenant,
    service_id: ex.service.id,
    recorded_at: new Date().toISOString(),
    mode: ex.mode,
    request: { method: ex.method, uri: ex.uri, headers: recordHeaders(ex.req.rawHeaders), body: encodeBody(ex.body.length > maxBodyBytes ? ex.body.subarray(0, maxBodyBytes) : ex.body), ...(truncated && { body_truncated: true }) },
    response: outcome.response,
    ...(outcome.error && { error: outcome.error }),
    timings: { started_at: ex.startedIso, upstream_ms: outcome.upstreamMs === null ? null : Math.round(outcome.upstreamMs * 100) / 100, total_ms: Math.round((performance.now() - ex.startedAt) * 100) / 100 },
  };
}
