import type { RecordedBody, RecordedHeaders, TrafficRecord } from '../../kernel/domain/index.js';
import { randomBase62 } from '../../kernel/ids.js';

/** What a test says about an exchange; the rest of the record is filled in. */
export interface ExchangeSpec {
  service_id?: string;
  method?: string;
  uri: string;
  request?: { headers?: RecordedHeaders; body?: RecordedBody | object };
  status?: number;
  response?: { headers?: RecordedHeaders; body?: RecordedBody | object } | null;
  recorded_at?: string;
}

const bodyOf = (b: RecordedBody | object | undefined): RecordedBody => (b === undefined ? '' : typeof b === 'string' || 'b64' in b ? (b as RecordedBody) : JSON.stringify(b));
const typed = (h: RecordedHeaders | undefined, b: unknown): RecordedHeaders => ({ ...(b !== undefined && typeof b === 'object' && !('b64' in (b as object)) && { 'content-type': 'application/json' }), ...h });

/** A traffic record as the agent writes one (objects given as bodies are JSON). */
export function trafficRecord(spec: ExchangeSpec): TrafficRecord {
  const at = spec.recorded_at ?? new Date().toISOString();
  return {
    id: `tr_${randomBase62(20)}`,
    tenant: 'default',
    service_id: spec.service_id ?? 'svc_test',
    recorded_at: at,
    mode: 'LEARN',
    request: { method: spec.method ?? 'GET', uri: spec.uri, headers: typed(spec.request?.headers, spec.request?.body), body: bodyOf(spec.request?.body) },
    response: spec.response === null ? null : { status: spec.status ?? 200, headers: typed(spec.response?.headers, spec.response?.body), body: bodyOf(spec.response?.body) },
    timings: { started_at: at, upstream_ms: 1, total_ms: 2 },
  };
}
