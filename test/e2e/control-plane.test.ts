import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startHarness, type Harness } from '../helpers/harness.js';

describe('control plane over real sockets', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h.close());

  it('answers /health without credentials, probing database and agent', async () => {
    const res = await h.call('GET', '/health', { key: null });
    assert.equal(res.status, 200);
    const components = res.body.components as Record<string, { status: string }>;
    assert.equal(components.database!.status, 'ok');
    assert.equal(components.agent!.status, 'ok');
    assert.equal(components.inference!.status, 'not_configured');
  });

  it('redacts the health summary detail for anonymous callers only', async () => {
    await h.runtime.cradle.health.refresh();
    const anon = await h.call('GET', '/v1/health/summary', { key: null });
    assert.equal(anon.status, 200);
    assert.equal(anon.body.detail_redacted, true);
    for (const c of Object.values(anon.body.components as Record<string, { detail: object; stale_for_seconds: number; status: string }>)) {
      assert.deepEqual(c.detail, {});
      assert.equal(typeof c.stale_for_seconds, 'number');
      assert.ok(c.status);
    }
    const authed = await h.call('GET', '/v1/health/summary');
    assert.equal(authed.body.detail_redacted, false);
    assert.deepEqual((authed.body.components as Record<string, { detail: object }>).database!.detail, { dialect: h.runtime.cradle.store.dialect });
  });

  it('refuses missing, unknown and malformed keys with 401 unauthenticated', async () => {
    for (const key of [null, 'usk_nope', `usk_${'a'.repeat(40)}`]) {
      const res = await h.call('GET', '/services', { key });
      assert.equal(res.status, 401);
      assert.equal(res.body.error_code, 'unauthenticated');
    }
  });

  it('accepts X-API-Key as an alias', async () => {
    const res = await h.call('GET', '/services', { key: null, headers: { 'X-API-Key': h.apiKey } });
    assert.equal(res.status, 200);
  });

  it('runs services CRUD with validation and a 409 for a reused binding', async () => {
    const created = await h.call('POST', '/services', { body: { name: 'payments', upstream_url: 'https://api.example.test/', routing_type: 'hostname', routing_value: 'API.Example.TEST:443' } });
    assert.equal(created.status, 201, created.text);
    assert.match(String(created.body.id), /^svc_/);
    assert.equal(created.body.routing_value, 'api.example.test');
    assert.equal(created.body.upstream_url, 'https://api.example.test');
    assert.equal(created.headers.get('location'), `/services/${created.body.id}`);

    const dup = await h.call('POST', '/services', { body: { name: 'other', upstream_url: 'http://x.test', routing_type: 'hostname', routing_value: 'api.example.test' } });
    assert.equal(dup.status, 409);
    assert.equal(dup.body.error_code, 'conflict');

    const prefixed = await h.call('POST', '/services', { body: { name: 'stripe', upstream_url: 'http://127.0.0.1:9', routing_type: 'path_prefix', routing_value: '/stripe/' } });
    assert.equal(prefixed.status, 201);
    assert.equal(prefixed.body.routing_value, '/stripe');

    const list = await h.call('GET', '/services?limit=1');
    assert.equal(list.status, 200);
    assert.equal(list.body.total, 2);
    assert.equal((list.body.data as unknown[]).length, 1);
    assert.equal(list.body.has_more, true);
    assert.equal(list.body.count, 1);

    const id = String(created.body.id);
    const updated = await h.call('PUT', `/services/${id}`, { body: { mode_override: 'mock', name: 'payments v2' } });
    assert.equal(updated.status, 200, updated.text);
    assert.equal(updated.body.mode_override, 'MOCK');
    assert.equal(updated.body.name, 'payments v2');
    const clash = await h.call('PUT', `/services/${id}`, { body: { routing_type: 'path_prefix', routing_value: '/stripe' } });
    assert.equal(clash.status, 409);

    for (const bad of [
      { name: 'x', upstream_url: 'ftp://x.test', routing_type: 'hostname', routing_value: 'a.test' },
      { name: 'x', upstream_url: '/relative', routing_type: 'hostname', routing_value: 'a.test' },
      { name: 'x', upstream_url: 'http://x.test', routing_type: 'header', routing_value: 'a.test' },
      { name: 'x', upstream_url: 'http://x.test', routing_type: 'path_prefix', routing_value: 'no-slash' },
      { name: 'x', upstream_url: 'http://x.test', routing_type: 'path_prefix', routing_value: '/webhook' },
      { name: 'x', upstream_url: 'http://x.test', routing_type: 'hostname', routing_value: 'bad host' },
      { name: 'x', upstream_url: 'http://x.test', routing_type: 'hostname', routing_value: 'a.test', colour: 'red' },
    ]) {
      const res = await h.call('POST', '/services', { body: bad });
      assert.equal(res.status, 422, JSON.stringify(bad));
      assert.equal(res.body.error_code, 'validation_error');
      assert.match(String(res.body.detail), /^body/);
    }

    assert.equal((await h.call('DELETE', `/services/${id}`)).status, 204);
    assert.equal((await h.call('GET', `/services/${id}`)).status, 404);
    assert.equal((await h.call('DELETE', `/services/${id}`)).body.error_code, 'not_found');
  });

  it('stores the mode and reads it back through the agent probe', async () => {
    const set = await h.call('POST', '/v1/mode', { body: { mode: 'mock' } });
    assert.equal(set.status, 200);
    assert.equal(set.body.mode, 'MOCK');
    const got = await h.call('GET', '/v1/mode');
    assert.deepEqual([got.body.mode, got.body.source], ['MOCK', 'agent']);
    const probe = (await (await fetch(`${h.agentUrl}/__understudy/health`)).json()) as Record<string, unknown>;
    assert.equal(probe.mode, 'MOCK');
    assert.equal((await h.call('POST', '/v1/mode', { body: { mode: 'MOCK' } })).status, 422);
    assert.equal((await h.call('POST', '/v1/mode', { body: { mode: 'transitioning' } })).status, 422);
    await h.call('POST', '/v1/mode', { body: { mode: 'learn' } });
  });

  it('merges config defaults with validated tenant overrides', async () => {
    const before = await h.call('GET', '/config');
    assert.equal((before.body.config as Record<string, unknown>).require_scrubbing, false);
    const put = await h.call('PUT', '/config/require_scrubbing', { body: { value: true } });
    assert.equal(put.status, 200);
    assert.equal((put.body.config as Record<string, unknown>).require_scrubbing, true);
    assert.deepEqual(put.body.overrides, { require_scrubbing: true });
    assert.equal((await h.call('PUT', '/config/require_scrubbing', { body: { value: 'yes' } })).status, 422);
    assert.equal((await h.call('PUT', '/config/mock_latency_ms', { body: { value: -1 } })).status, 422);
    assert.equal((await h.call('PUT', '/config/mock_latency_ms', { body: {} })).status, 422);
    assert.equal((await h.call('PUT', '/config/no_such_key', { body: { value: 1 } })).status, 404);
  });

  it('generates, lists and revokes keys; the raw key is shown once', async () => {
    const gen = await h.call('POST', '/v1/api-keys/generate', { body: { name: 'ci' } });
    assert.equal(gen.status, 201);
    const raw = String(gen.body.api_key);
    assert.match(raw, /^usk_[0-9A-Za-z]{40}$/);
    assert.equal(gen.body.prefix, raw.slice(0, 12));
    const list = await h.call('GET', '/v1/api-keys');
    assert.ok(!list.text.includes(raw), 'the list never shows a raw key');
    assert.ok((list.body.data as { prefix: string }[]).some((k) => k.prefix === raw.slice(0, 12)));
    assert.equal((await h.call('GET', '/services', { key: raw })).status, 200);
    const revoked = await h.call('DELETE', '/v1/api-keys', { key: raw });
    assert.equal(revoked.status, 200);
    assert.equal(revoked.body.id, gen.body.id);
    assert.equal((await h.call('GET', '/services', { key: raw })).status, 401);
    assert.equal((await h.call('GET', '/services')).status, 200, 'other keys still work');
  });

  it('logs in with a session cookie and logs out', async () => {
    const bad = await h.call('POST', '/v1/session', { key: null, body: { api_key: 'usk_wrong' } });
    assert.equal(bad.status, 401);
    const login = await h.call('POST', '/v1/session', { key: null, body: { api_key: h.apiKey } });
    assert.equal(login.status, 200);
    const cookie = login.headers.get('set-cookie') ?? '';
    assert.match(cookie, /service_session=/);
    assert.match(cookie, /httponly/i);
    assert.match(cookie, /samesite=lax/i);
    const session = cookie.split(';')[0]!;
    assert.equal((await h.call('GET', '/services', { key: null, headers: { Cookie: session } })).status, 200);
    assert.equal((await h.call('DELETE', '/v1/session', { key: null, headers: { Cookie: session } })).status, 204);
    assert.equal((await h.call('GET', '/services', { key: null, headers: { Cookie: session } })).status, 401);
  });

  it('leaves exactly one activity record per authenticated mutating call', async () => {
    const before = Number((await h.call('GET', '/v1/activity?limit=1')).body.total);
    await h.call('POST', '/services', { body: { name: 'a', upstream_url: 'http://a.test', routing_type: 'hostname', routing_value: 'activity.test' } });
    await h.call('POST', '/services', { body: { name: 'a' } });
    await h.call('PUT', '/config/mock_latency_ms', { body: { value: 5 } });
    await h.call('GET', '/services');
    const after = await h.call('GET', '/v1/activity?limit=3');
    assert.equal(Number(after.body.total) - before, 3);
    const [put, invalid, created] = after.body.data as { action: string; status: number; detail: Record<string, unknown>; actor: string }[];
    assert.deepEqual([put!.action, put!.status], ['put /config/{key}', 200]);
    assert.deepEqual([invalid!.status, invalid!.detail.error_code], [422, 'validation_error']);
    assert.deepEqual([created!.action, created!.status], ['post /services', 201]);
    assert.match(created!.actor, /^key_/);
  });

  it('tracks onboarding steps', async () => {
    const res = await h.call('GET', '/v1/onboarding/status');
    const steps = res.body.steps as { id: string; done: boolean }[];
    assert.deepEqual(steps.map((s) => s.id), ['key_created', 'service_registered', 'traffic_recorded', 'transition_run', 'mock_served']);
    assert.deepEqual(steps.map((s) => s.done), [true, true, false, false, false]);
    assert.equal(res.body.total, 5);
  });

  it('answers 503 transitioning with Retry-After to mutating calls while TRANSITIONING; reads stay live', async () => {
    const { tenantState, tenant } = h.runtime.cradle;
    await tenantState.setMode(tenant, 'TRANSITIONING');
    try {
      for (const [method, path, body] of [
        ['POST', '/services', { name: 'x', upstream_url: 'http://x.test', routing_type: 'hostname', routing_value: 'x.test' }],
        ['POST', '/v1/mode', { mode: 'mock' }],
        ['PUT', '/config/mock_latency_ms', { value: 1 }],
        ['DELETE', '/mocks', undefined],
      ] as const) {
        const res = await h.call(method, path, { body });
        assert.equal(res.status, 503, `${method} ${path}`);
        assert.equal(res.body.error_code, 'transitioning');
        assert.ok(Number(res.headers.get('retry-after')) > 0);
      }
      assert.equal((await h.call('GET', '/services')).status, 200);
      assert.equal((await h.call('GET', '/v1/mode')).body.mode, 'TRANSITIONING');
    } finally {
      await tenantState.setMode(tenant, 'LEARN');
    }
  });

  it('answers 501 not_implemented on declared routes that are not built, after auth', async () => {
    assert.equal((await h.call('GET', '/insights', { key: null })).status, 401);
    const res = await h.call('GET', '/insights');
    assert.equal(res.status, 501);
    assert.equal(res.body.error_code, 'not_implemented');
  });

  it('gates pro routes with 403 feature_gated naming the feature on the free tier', async () => {
    const res = await h.call('GET', '/v1/statecharts');
    assert.equal(res.status, 403);
    assert.deepEqual([res.body.error_code, res.body.feature], ['feature_gated', 'statecharts']);
  });

  it('serves an OpenAPI 3.1 document of every route', async () => {
    const res = await h.call('GET', '/openapi.json', { key: null });
    assert.equal(res.status, 200);
    assert.equal(res.body.openapi, '3.1.0');
    const paths = res.body.paths as Record<string, Record<string, Record<string, unknown>>>;
    assert.ok(paths['/services']!.post!.requestBody, 'built routes carry their request schema');
    assert.equal(paths['/v1/sequences/statecharts']!.get!.deprecated, true);
    assert.equal(paths['/v1/statecharts']!.get!.deprecated, undefined);
    assert.equal(paths['/insights']!.get!['x-not-implemented'], true);
    assert.ok((paths['/insights']!.get!.responses as Record<string, unknown>)['501']);
    const mocks = (paths['/mocks']!.get!.responses as Record<string, { content: Record<string, { schema: { properties: { data: { items: { properties: Record<string, unknown> } } } } }> }>)['200']!;
    assert.ok(mocks.content['application/json']!.schema.properties.data.items.properties.uri_template, 'the mock entry model is documented');
    assert.equal(paths['/v1/drift/events']!.get!['x-tier'], 'pro');
    assert.equal(paths['/services']!.get!['x-not-implemented'], undefined);
  });

  it('exposes Prometheus metrics to authenticated callers', async () => {
    const res = await h.call('GET', '/metrics');
    assert.equal(res.status, 200);
    assert.match(res.text, /understudy_http_request_duration_seconds_bucket/);
    assert.match(res.text, /understudy_sync_lag_seconds \d/);
  });

  it('never logs API keys, cookies or Authorization values', async () => {
    await h.call('GET', '/services', { headers: { Authorization: 'Bearer secret-bearer-value', Cookie: 'service_session=cookie-secret-value' } });
    await h.call('GET', '/services?api_key=query-secret-value');
    const all = h.logs.join('\n');
    assert.ok(h.logs.length > 10);
    for (const secret of [h.apiKey, 'secret-bearer-value', 'cookie-secret-value', 'query-secret-value']) assert.ok(!all.includes(secret), secret);
  });
});
