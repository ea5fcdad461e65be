import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Type } from '@sinclair/typebox';
import { defineRoute } from '../../adapters/http/route.js';
import { startHarness, type Harness } from '../helpers/harness.js';

describe('rate limits', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ env: { SERVICE_RATE_LIMITS: 'global=40,transition_start=3' } });
  });
  after(() => h.close());

  it('answers 429 rate_limited naming the bucket, per named bucket and overall', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await h.call('POST', '/v1/transition/start', { body: {} })).status);
    assert.deepEqual(statuses, [422, 422, 422, 429]);
    const limited = await h.call('POST', '/v1/transition/start', { body: {} });
    assert.equal(limited.body.error_code, 'rate_limited');
    assert.match(String(limited.body.detail), /transition_start/);
    assert.ok(Number(limited.headers.get('retry-after')) >= 1);

    let last = await h.call('GET', '/health', { key: null });
    for (let i = 0; i < 40 && last.status !== 429; i++) last = await h.call('GET', '/health', { key: null });
    assert.equal(last.status, 429);
    assert.match(String(last.body.detail), /global/);
  });
});

describe('Idempotency-Key on a route that opts in', () => {
  let h: Harness;
  let calls = 0;
  const route = defineRoute({
    method: 'POST',
    path: '/test/idempotent',
    summary: 'test route',
    tag: 'test',
    idempotent: true,
    body: Type.Object({ name: Type.String() }),
    async handler({ cradle, tenant, body }) {
      calls++;
      if (body.name === 'fail') throw new Error('boom');
      const svc = await cradle.services.create(tenant, { name: body.name, upstream_url: 'http://x.test', routing_type: 'hostname', routing_value: `${body.name}.test`, mode_override: null });
      return { status: 202, body: { id: svc.id, calls } };
    },
  });
  before(async () => {
    h = await startHarness({ extraRoutes: [route] });
  });
  after(() => h.close());

  it('replays the stored answer for the same key without repeating the side effect', async () => {
    const first = await h.call('POST', '/test/idempotent', { body: { name: 'one' }, headers: { 'Idempotency-Key': 'k-1' } });
    const again = await h.call('POST', '/test/idempotent', { body: { name: 'one' }, headers: { 'Idempotency-Key': 'k-1' } });
    assert.equal(first.status, 202);
    assert.equal(again.status, 202);
    assert.deepEqual(again.body, first.body);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(calls, 1);
    assert.equal((await h.call('GET', '/services')).body.total, 1);
  });

  it('refuses the same key on a different request with 409 idempotency_conflict', async () => {
    const res = await h.call('POST', '/test/idempotent', { body: { name: 'two' }, headers: { 'Idempotency-Key': 'k-1' } });
    assert.equal(res.status, 409);
    assert.equal(res.body.error_code, 'idempotency_conflict');
  });

  it('frees the key when the call fails, and runs again without a key', async () => {
    const before = calls;
    assert.equal((await h.call('POST', '/test/idempotent', { body: { name: 'fail' }, headers: { 'Idempotency-Key': 'k-2' } })).status, 500);
    assert.equal((await h.call('POST', '/test/idempotent', { body: { name: 'fail' }, headers: { 'Idempotency-Key': 'k-2' } })).status, 500);
    assert.equal(calls, before + 2);
    await h.call('POST', '/test/idempotent', { body: { name: 'three' } });
    await h.call('POST', '/test/idempotent', { body: { name: 'four' } });
    assert.equal(calls, before + 4);
  });

  it('keeps a 500 free of stack traces', async () => {
    const res = await h.call('POST', '/test/idempotent', { body: { name: 'fail' } });
    assert.equal(res.body.error_code, 'internal_error');
    assert.ok(!res.text.includes('boom'));
    assert.match(String(res.body.detail), /req_/);
  });

  it('is scoped to the tenant: the record lives under RLS', async () => {
    const rows = await h.runtime.cradle.store.withTenant('someone-else', (trx) => trx('idempotency_keys').select('key'));
    assert.deepEqual(rows, []);
  });
});

describe('pro tier', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ tier: 'pro' });
  });
  after(() => h.close());

  it('lets a pro licence through the tier gate to the route itself', async () => {
    const res = await h.call('GET', '/v1/statecharts');
    assert.equal(res.status, 501);
    assert.equal(res.body.error_code, 'not_implemented');
  });
});

describe('health summary during a database outage', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h.close());

  it('answers at once with the last state and its staleness; /health reports the outage', async () => {
    await h.runtime.cradle.health.refresh();
    // Take the database away for real: the pool is destroyed, so every query now fails.
    await h.runtime.cradle.store.knex.destroy();
    const started = performance.now();
    const summary = await h.call('GET', '/v1/health/summary', { key: null });
    assert.ok(performance.now() - started < 500);
    assert.equal(summary.status, 200);
    assert.equal((summary.body.components as Record<string, { status: string }>).database!.status, 'ok', 'the cached state until the next refresh');
    await h.runtime.cradle.health.refresh();
    const after = await h.call('GET', '/v1/health/summary', { key: null });
    const database = (after.body.components as Record<string, { status: string; stale_for_seconds: number }>).database!;
    assert.equal(database.status, 'down');
    assert.equal(typeof database.stale_for_seconds, 'number');
    assert.equal(after.body.status, 'degraded');
    const sync = await h.call('GET', '/health', { key: null });
    assert.equal(sync.status, 503);
    assert.equal(sync.body.status, 'down');
  });
});
