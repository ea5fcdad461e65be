/** The shared vocabulary of the service. Plain data only. @public */

/** Global and per-service operating modes. */
export const MODES = ['LEARN', 'MOCK', 'PASSTHROUGH', 'TRANSITIONING'] as const;
export type Mode = (typeof MODES)[number];

/** Plans, ordered: a higher tier includes every feature of a lower one. */
export const TIERS = ['free', 'pro', 'enterprise'] as const;
export type Tier = (typeof TIERS)[number];

/** True when `have` includes what `need` does. */
export function tierAtLeast(have: Tier, need: Tier): boolean {
  return TIERS.indexOf(have) >= TIERS.indexOf(need);
}

export const ROUTING_TYPES = ['hostname', 'path_prefix'] as const;
export type RoutingType = (typeof ROUTING_TYPES)[number];

/** A registered upstream. */
export interface Service {
  id: string;
  name: string;
  upstream_url: string;
  routing_type: RoutingType;
  routing_value: string;
  /** Wins over the global mode for this service when set. */
  mode_override: Exclude<Mode, 'TRANSITIONING'> | null;
  created_at: string;
  updated_at: string;
}

/** What the licence says about this deployment. */
export interface Licence {
  tenant: string;
  tier: Tier;
  /** Expiry, seconds since the epoch; absent = never. */
  exp?: number;
}

/** An API key as the API shows it: never the raw key. */
export interface ApiKeyInfo {
  id: string;
  prefix: string;
  name: string | null;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

/** One line of the activity log. */
export interface ActivityRecord {
  id: string;
  at: string;
  actor: string | null;
  action: string;
  method: string;
  path: string;
  status: number;
  request_id: string;
  detail: Record<string, unknown>;
}

/** A body as records keep it: UTF-8 text as a string; anything else as base64 with its size. */
export type RecordedBody = string | { b64: string; size_bytes: number };

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Byte-exact encoding of a body (SPEC's webhook rule, used for traffic too). */
export function encodeBody(bytes: Uint8Array): RecordedBody {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return { b64: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64'), size_bytes: bytes.byteLength };
  }
}

/** The bytes of a recorded body. */
export function decodeBody(body: RecordedBody | null | undefined): Buffer {
  if (body === null || body === undefined) return Buffer.alloc(0);
  return typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body.b64, 'base64');
}

/** Connection-level headers that never cross a proxy (RFC 9110 §7.6.1), plus Host. */
export const HOP_BY_HOP_HEADERS: ReadonlySet<string> = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host']);

/** Headers a stored answer never replays: hop-by-hop ones, and Content-Length (the agent frames each answer itself). */
export const UNREPLAYED_HEADERS: ReadonlySet<string> = new Set([...HOP_BY_HOP_HEADERS, 'content-length']);

/** Header name (lower-case) to value; a repeated header keeps every value, in order. */
export type RecordedHeaders = Record<string, string | string[]>;

/** How a mock entry matches a request body. */
export type BodyMatcher = { equals: string } | { json: unknown };

/** One entry of the mock library. */
export interface MockEntry {
  id: string;
  service_id: string;
  /** The service's upstream URL when the entry was made; kept when the service is deleted. */
  service_upstream_id: string;
  method: string;
  /** A concrete path, e.g. `/v1/customers/cus_1`. */
  path: string;
  /** The path's template, e.g. `/v1/customers/{customer_id}`; equal to `path` when concrete. */
  uri_template: string;
  /** Query parameters the request must carry with these values; null matches any query. */
  query: Record<string, string[]> | null;
  body_matcher: BodyMatcher | null;
  response: { status: number; headers: RecordedHeaders; body: RecordedBody | null };
  /** Where it came from: `recorded`, `har`, `postman`, `openapi`, `manual`, or a plugin's name. */
  source: string;
  /** Where in its source the entry came from, e.g. `log.entries[17]`; null when unknown. */
  origin: string | null;
  scrubbed: boolean;
  created_at: string;
  last_hit_at: string | null;
  hit_count: number;
}

/** One recorded exchange, as a line of `traffic/{service_id}.jsonl`. */
export interface TrafficRecord {
  id: string;
  tenant: string;
  service_id: string;
  recorded_at: string;
  mode: Mode;
  request: { method: string; uri: string; headers: RecordedHeaders; body: RecordedBody; body_truncated?: boolean };
  response: { status: number; headers: RecordedHeaders; body: RecordedBody; body_truncated?: boolean } | null;
  /** Upstream failure, when there was no response. */
  error?: string;
  timings: { started_at: string; upstream_ms: number | null; total_ms: number };
}

/** SPEC's captured webhook record, one line of `webhooks/{service_id}.jsonl`. */
export interface WebhookCapture {
  id: string;
  received_at: string;
  tenant: string;
  service_id: string;
  method: string;
  uri: string;
  headers: Record<string, string>;
  body: RecordedBody;
  signature_kind: 'payments' | 'github' | 'standard' | 'generic';
}

/** A header's value as one string (repeated values joined by ", "), '' when absent; `name` lower-case. */
export function headerValue(headers: RecordedHeaders, name: string): string {
  const v = headers[name];
  return Array.isArray(v) ? v.join(', ') : (v ?? '');
}
