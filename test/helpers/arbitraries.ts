import fc from 'fast-check';
import type { TrafficRecord } from '../../kernel/domain/index.js';

/** Strings a scrubber should have an opinion on, beside arbitrary ones. */
const SENSITIVE = ['jane.doe@example.com', '4111 1111 1111 1111', '+1 415 555 0100', '219-09-9999', 'DE89370400440532013000', '203.0.113.9', 'Bearer abcdef0123456789xyz', 'sk_live_abcdefghij0123456789', 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJl', 'cus_9s8d7f2k'];
const KEYS = ['email', 'name', 'first_name', 'password', 'token', 'api_key', 'phone', 'address', 'note', 'id', 'keepme', 'internal'];
const HEADERS = ['authorization', 'cookie', 'set-cookie', 'x-api-key', 'content-type', 'user-agent', 'x-request-id'];

const text = fc.oneof(fc.constantFrom(...SENSITIVE), fc.string({ maxLength: 40 }), fc.constantFrom(...SENSITIVE).map((s) => `see ${s} here`));
const segment = fc.oneof(fc.constantFrom('v1', 'customers', 'orders', 'items', 'search'), fc.integer({ min: 1, max: 1e6 }).map(String), fc.uuid(), fc.date({ noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10)), fc.stringMatching(/^[a-z]{3}_[A-Za-z0-9]{8}$/), fc.constantFrom(...SENSITIVE).map(encodeURIComponent));

/** A JSON value whose leaves are often sensitive and whose keys are often telling. */
const json: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, text, fc.integer(), fc.boolean(), fc.constant(null), fc.array(tie('value'), { maxLength: 3 }), fc.dictionary(fc.constantFrom(...KEYS), tie('value'), { maxKeys: 4, noNullPrototype: true })),
})).value;

const body = fc.oneof(
  fc.constant(''),
  text,
  json.map((v) => JSON.stringify(v)),
  fc.uint8Array({ maxLength: 16 }).map((b) => ({ b64: Buffer.from(b).toString('base64'), size_bytes: b.length })),
);
const headers = fc.dictionary(fc.constantFrom(...HEADERS), fc.oneof(text, fc.array(text, { minLength: 1, maxLength: 2 })), { maxKeys: 4, noNullPrototype: true });

/** Arbitrary traffic records shaped as the agent writes them. */
export const arbitraryRecord: fc.Arbitrary<TrafficRecord> = fc
  .record({
    method: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE'),
    segments: fc.array(segment, { maxLength: 5 }),
    query: fc.array(fc.tuple(fc.constantFrom(...KEYS, 'limit'), text), { maxLength: 3 }),
    reqHeaders: headers,
    reqBody: body,
    status: fc.constantFrom(200, 201, 404, 500),
    resHeaders: headers,
    resBody: body,
    n: fc.integer({ min: 0, max: 1e9 }),
  })
  .map((r) => ({
    id: `tr_${r.n}`,
    tenant: 'default',
    service_id: 'svc_contract',
    recorded_at: new Date(1.7e12 + r.n).toISOString(),
    mode: 'LEARN' as const,
    request: { method: r.method, uri: `/${r.segments.join('/')}${r.query.length ? `?${new URLSearchParams(r.query)}` : ''}`, headers: r.reqHeaders, body: r.reqBody },
    response: { status: r.status, headers: r.resHeaders, body: r.resBody },
    timings: { started_at: new Date(1.7e12).toISOString(), upstream_ms: 1, total_ms: 2 },
  }));
