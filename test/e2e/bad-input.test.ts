import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RouteSpec } from '../../adapters/http/route.js';
import { ALL_ROUTES } from '../../adapters/http/routes/index.js';
import { JSON_BODY_LIMIT } from '../../adapters/http/body.js';
import { startHarness, type Harness } from '../helpers/harness.js';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** Well-formed ids of nothing (a malformed id is 404 before the body is looked at). */
const SAMPLE_PARAMS: Record<string, string> = { key: 'mock_latency_ms', webhook_id: 'wh_00000000000000aa', format: 'nope' };

function concrete(path: string): string {
  return path.replace(/\{([a-z_]+)\}/g, (_, name: string) => SAMPLE_PARAMS[name] ?? `${name}_missing0001`);
}

interface Case {
  name: string;
  method: string;
  path: string;
  init?: { body?: string | Buffer; headers?: Record<string, string>; key?: string | null };
  status: number;
  code: string;
}

/** Every hostile request this suite sends, derived from the route table. */
function casesFor(spec: RouteSpec, allMethodsOfPath: Set<string>): Case[] {
  const path = concrete(spec.path);
  const out: Case[] = [];
  const label = `${spec.method} ${spec.path}`;
  const other = METHODS.find((m) => !allMethodsOfPath.has(m));
  if (other) out.push({ name: `${label}: wrong method ${other}`, method: other, path, status: 405, code: 'method_not_allowed' });
  if (spec.auth === undefined || spec.auth === true) {
    out.push({ name: `${label}: no key`, method: spec.method, path, init: { key: null }, status: 401, code: 'unauthenticated' });
    out.push({ name: `${label}: revoked-looking key`, method: spec.method, path, init: { key: `usk_${'0'.repeat(40)}` }, status: 401, code: 'unauthenticated' });
  }
  if (spec.tier === 'pro') {
    out.push({ name: `${label}: free tier`, method: spec.method, path, status: 403, code: 'feature_gated' });
    return out;
  }
  if (!spec.handler) {
    out.push({ name: `${label}: not built`, method: spec.method, path, status: 501, code: 'not_implemented' });
    return out;
  }
  if (spec.query?.properties.limit) {
    for (const q of ['limit=abc', 'limit=0', 'limit=501', 'offset=-1', 'limit=1.5']) {
      out.push({ name: `${label}: ${q}`, method: spec.method, path: `${path}?${q}`, status: 422, code: 'validation_error' });
    }
  }
  if (spec.method === 'GET') return out;
  const json = { 'Content-Type': 'application/json' };
  if (spec.streamBody) {
    // Routes that read their document as a stream: the format decides what it must look like.
    if (spec.params) return [...out, { name: `${label}: no importer for the format`, method: spec.method, path, init: { body: '{}', headers: json }, status: 404, code: 'not_found' }];
    out.push({ name: `${label}: not a document of its format`, method: spec.method, path, init: { body: '{"x":1}', headers: json }, status: 422, code: 'validation_error' });
    out.push({ name: `${label}: no body`, method: spec.method, path, init: { headers: json }, status: 422, code: 'validation_error' });
    out.push({ name: `${label}: text/plain`, method: spec.method, path, init: { body: '{}', headers: { 'Content-Type': 'text/plain' } }, status: 415, code: 'unsupported_media_type' });
  } else if (spec.body) {
    out.push({ name: `${label}: malformed JSON`, method: spec.method, path, init: { body: '{"name": ', headers: json }, status: 422, code: 'validation_error' });
    out.push({ name: `${label}: JSON array`, method: spec.method, path, init: { body: '[1,2]', headers: json }, status: 422, code: 'validation_error' });
    out.push({ name: `${label}: wrong types`, method: spec.method, path, init: { body: JSON.stringify({ name: 7, mode: 7, value: undefined, api_key: 7, routing_type: 1 }), headers: json }, status: 422, code: 'validation_error' });
    out.push({ name: `${label}: unknown field`, method: spec.method, path, init: { body: JSON.stringify({ surprise: true }), headers: json }, status: 422, code: 'validation_error' });
    out.push({ name: `${label}: text/plain`, method: spec.method, path, init: { body: '{}', headers: { 'Content-Type': 'text/plain' } }, status: 415, code: 'unsupported_media_type' });
    out.push({ name: `${label}: oversize`, method: spec.method, path, init: { body: Buffer.alloc((spec.bodyLimit ?? JSON_BODY_LIMIT) + 1, 0x20), headers: json }, status: 413, code: 'payload_too_large' });
  } else {
    out.push({ name: `${label}: a body where none is taken`, method: spec.method, path, init: { body: '{"x":1}', headers: json }, status: 422, code: 'validation_error' });
  }
  return out;
}

describe('bad input on every route', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h.close());

  it('answers each hostile request with its status and error_code, never a 500 or a stack', async () => {
    const methodsByPath = new Map<string, Set<string>>();
    for (const r of ALL_ROUTES) (methodsByPath.get(r.path) ?? methodsByPath.set(r.path, new Set()).get(r.path)!).add(r.method);
    // Revoking the caller's own key would end the walk; that route gets a key of its own.
    const cases = ALL_ROUTES.flatMap((r) => casesFor(r, methodsByPath.get(r.path)!));
    cases.push(
      { name: 'unknown route', method: 'GET', path: '/v1/nothing-here', status: 404, code: 'not_found' },
      { name: 'unknown route, unauthenticated', method: 'POST', path: '/nope', init: { key: null }, status: 404, code: 'not_found' },
      { name: 'unknown method', method: 'PROPFIND', path: '/services', status: 405, code: 'method_not_allowed' },
      { name: 'path id with odd characters', method: 'GET', path: '/services/..%2F..%2Fetc', status: 404, code: 'not_found' },
      { name: 'mode with extra field', method: 'POST', path: '/v1/mode', init: { body: '{"mode":"mock","force":true}', headers: { 'Content-Type': 'application/json' } }, status: 422, code: 'validation_error' },
      { name: 'invalid Idempotency-Key is ignored where not honoured', method: 'GET', path: '/services', init: { headers: { 'Idempotency-Key': 'x' } }, status: 200, code: '' },
    );
    assert.ok(cases.length > 150, `only ${cases.length} cases`);
    const failures: string[] = [];
    for (const c of cases) {
      const headers: Record<string, string> = { ...(c.init?.key !== null && { 'X-Service-Api-Key': c.init?.key ?? h.apiKey }), ...c.init?.headers };
      const res = await fetch(h.url + c.path, { method: c.method, headers, body: c.init?.body });
      const text = await res.text();
      if (res.status >= 500 && res.status !== 501) failures.push(`${c.name}: ${res.status} ${text}`);
      if (/\bat .+:\d+:\d+/.test(text)) failures.push(`${c.name}: stack trace in body`);
      if (res.status !== c.status) {
        failures.push(`${c.name}: expected ${c.status}, got ${res.status} ${text.slice(0, 200)}`);
        continue;
      }
      if (!c.code) continue;
      const body = JSON.parse(text) as { error_code?: string; detail?: string };
      if (body.error_code !== c.code || typeof body.detail !== 'string') failures.push(`${c.name}: body ${text.slice(0, 200)}`);
      if (c.status === 405 && !res.headers.get('allow')) failures.push(`${c.name}: no Allow header`);
    }
    assert.deepEqual(failures, []);
  });
});
