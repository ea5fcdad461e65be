import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { startHarness, type Harness } from '../helpers/harness.js';
import type { TrafficRecord, WebhookCapture } from '../../kernel/domain/index.js';

/** A real upstream on loopback: echoes requests, and serves a few special shapes. */
function startUpstream(): Promise<{ server: Server; url: string; hits: number }> {
  const state = { hits: 0 };
  const big = Buffer.alloc(20 * 1024 * 1024, 0xff);
  const server = createServer((req, res) => {
    state.hits++;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (req.url === '/gzip') {
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
        return res.end(gzipSync('{"zipped":true}'));
      }
      if (req.url === '/binary') {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        return res.end(Buffer.from([0, 255, 254, 1, 128]));
      }
      if (req.url === '/big') {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        return res.end(big);
      }
      if (req.url === '/chunked') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('part one, ');
        return setTimeout(() => res.end('part two'), 5);
      }
      if (req.url === '/empty') {
        res.writeHead(204);
        return res.end();
      }
      res.setHeader('set-cookie', ['a=1; Path=/', 'b=2; Path=/']);
      res.writeHead(201, { 'content-type': 'application/json', 'x-upstream': 'yes' });
      res.end(JSON.stringify({ method: req.method, url: req.url, body: body.toString('base64'), host: req.headers.host }));
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, get hits() { return state.hits; } })));
}

/** A raw HTTP request through the agent (to send absolute-form targets and exact bytes). */
function send(agentUrl: string, opts: { method?: string; path: string; headers?: Record<string, string | string[]>; body?: Buffer | string }): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  const u = new URL(agentUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: u.hostname, port: u.port, method: opts.method ?? 'GET', path: opts.path, headers: opts.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** A real upstream and a harness for one suite, started before its tests and closed after. */
function withUpstreamAndHarness(): { h: Harness; upstream: Awaited<ReturnType<typeof startUpstream>> } {
  const state = {} as { h: Harness; upstream: Awaited<ReturnType<typeof startUpstream>> };
  before(async () => {
    state.upstream = await startUpstream();
    state.h = await startHarness();
  });
  after(async () => {
    await state.h.close();
    state.upstream.server.close();
  });
  return state;
}

const json = (b: Buffer) => JSON.parse(b.toString('utf8')) as Record<string, unknown>;
const lines = <T>(file: string): T[] => readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as T);

describe('agent: LEARN, MOCK and webhook capture over real sockets', () => {
  let h: Harness;
  let upstream: Awaited<ReturnType<typeof startUpstream>>;
  let svc: string;
  let hostSvc: string;

  before(async () => {
    upstream = await startUpstream();
    h = await startHarness();
    svc = String((await h.call('POST', '/services', { body: { name: 'up', upstream_url: upstream.url, routing_type: 'path_prefix', routing_value: '/up' } })).body.id);
    hostSvc = String((await h.call('POST', '/services', { body: { name: 'api', upstream_url: upstream.url, routing_type: 'hostname', routing_value: 'api.example.test' } })).body.id);
  });
  after(async () => {
    await h.close();
    upstream.server.close();
  });

  it('answers 404 not_found naming what was tried when nothing is bound', async () => {
    const res = await send(h.agentUrl, { path: '/nowhere/x' });
    assert.equal(res.status, 404);
    const body = json(res.body);
    assert.equal(body.error_code, 'not_found');
    assert.match(String(body.detail), /\/nowhere\/x/);
    assert.match(String(body.detail), /\/up/);
  });

  it('LEARN forwards by path prefix (stripped) and by hostname, streams answers back and records them', async () => {
    const byPrefix = await send(h.agentUrl, { method: 'POST', path: '/up/v1/customers/cus_1?expand=a&expand=b', headers: { 'content-type': 'application/json', 'x-test': 'one' }, body: '{"name":"Ada"}' });
    assert.equal(byPrefix.status, 201);
    assert.deepEqual(byPrefix.headers['set-cookie'], ['a=1; Path=/', 'b=2; Path=/']);
    const echoed = json(byPrefix.body);
    assert.equal(echoed.url, '/v1/customers/cus_1?expand=a&expand=b');
    assert.equal(Buffer.from(String(echoed.body), 'base64').toString(), '{"name":"Ada"}');

    const byHost = await send(h.agentUrl, { path: '/v1/ping', headers: { host: 'API.example.test:8443' } });
    assert.equal(byHost.status, 201);
    assert.equal(json(byHost.body).url, '/v1/ping');
    // Absolute-form, as a client with HTTP_PROXY=http://agent sends it.
    const proxied = await send(h.agentUrl, { path: 'http://api.example.test/v1/proxied?x=1' });
    assert.equal(json(proxied.body).url, '/v1/proxied?x=1');

    await h.agent.flush();
    const records = lines<TrafficRecord>(path.join(h.dataDir, 'traffic', `${svc}.jsonl`));
    assert.equal(records.length, 1);
    const r = records[0]!;
    assert.deepEqual([r.request.method, r.request.uri, r.request.body, r.request.headers['x-test']], ['POST', '/v1/customers/cus_1?expand=a&expand=b', '{"name":"Ada"}', 'one']);
    assert.equal(r.response!.status, 201);
    assert.deepEqual(r.response!.headers['set-cookie'], ['a=1; Path=/', 'b=2; Path=/']);
    assert.equal(r.mode, 'LEARN');
    assert.match(r.id, /^tr_/);
    assert.equal(lines<TrafficRecord>(path.join(h.dataDir, 'traffic', `${hostSvc}.jsonl`)).length, 2);
  });

  it('passes binary, gzip, chunked, empty and 20 MiB bodies byte-exact and records them so', async () => {
    const gz = await send(h.agentUrl, { path: '/up/gzip', headers: { 'accept-encoding': 'gzip' } });
    assert.deepEqual(gz.body, gzipSync('{"zipped":true}'));
    assert.equal(gz.headers['content-encoding'], 'gzip');
    const bin = await send(h.agentUrl, { path: '/up/binary' });
    assert.deepEqual([...bin.body], [0, 255, 254, 1, 128]);
    const chunked = await send(h.agentUrl, { path: '/up/chunked' });
    assert.equal(chunked.body.toString(), 'part one, part two');
    const empty = await send(h.agentUrl, { path: '/up/empty' });
    assert.equal(empty.status, 204);
    const upload = Buffer.alloc(20 * 1024 * 1024, 3);
    const big = await send(h.agentUrl, { method: 'PUT', path: '/up/big', body: upload, headers: { 'content-type': 'application/octet-stream' } });
    assert.equal(big.body.length, 20 * 1024 * 1024);
    await h.agent.flush();
    const byUri = new Map(lines<TrafficRecord>(path.join(h.dataDir, 'traffic', `${svc}.jsonl`)).map((r) => [r.request.uri, r]));
    assert.deepEqual(byUri.get('/binary')!.response!.body, { b64: Buffer.from([0, 255, 254, 1, 128]).toString('base64'), size_bytes: 5 });
    const gzBody = byUri.get('/gzip')!.response!.body as { b64: string };
    assert.deepEqual(Buffer.from(gzBody.b64, 'base64'), gzipSync('{"zipped":true}'));
    assert.equal(byUri.get('/empty')!.response!.body, '');
    const bigRecord = byUri.get('/big')!;
    assert.equal(Buffer.from((bigRecord.response!.body as { b64: string }).b64, 'base64').length, 20 * 1024 * 1024);
    assert.equal(bigRecord.request.body_truncated, undefined);
  });

  it('shows recorded traffic through GET /v1/traffic with filters', async () => {
    const all = await h.call('GET', `/v1/traffic?service_id=${svc}&limit=500`);
    assert.equal(all.status, 200, all.text);
    assert.ok(Number(all.body.total) >= 6);
    const posts = await h.call('GET', `/v1/traffic?service_id=${svc}&method=post`);
    assert.equal(posts.body.total, 1);
    const prefix = await h.call('GET', `/v1/traffic?path_prefix=/v1/customers`);
    assert.equal(prefix.body.total, 1);
    const status = await h.call('GET', `/v1/traffic?status=204`);
    assert.equal(status.body.total, 1);
    const future = await h.call('GET', `/v1/traffic?since=2999-01-01`);
    assert.equal(future.body.total, 0);
    assert.equal((await h.call('GET', '/v1/traffic?status=99')).status, 422);
    assert.equal((await h.call('GET', '/v1/traffic?since=yesterday')).status, 422);
    const again = await h.call('GET', `/v1/traffic?service_id=${svc}&limit=500`);
    assert.equal(again.body.total, all.body.total, 'a second sync imports nothing twice');
  });

  it('answers 502 upstream_unavailable when the upstream is down in LEARN', async () => {
    const dead = String((await h.call('POST', '/services', { body: { name: 'dead', upstream_url: 'http://127.0.0.1:9', routing_type: 'path_prefix', routing_value: '/dead' } })).body.id);
    const res = await send(h.agentUrl, { path: '/dead/x' });
    assert.equal(res.status, 502);
    assert.equal(json(res.body).error_code, 'upstream_unavailable');
    await h.call('DELETE', `/services/${dead}`);
  });

  it('MOCK answers from the library with the upstream stopped: exact before template, query and body matchers, near misses', async () => {
    const { mocks, tenant } = h.runtime.cradle;
    const base = { service_id: svc, service_upstream_id: upstream.url, source: 'manual', scrubbed: true, body_matcher: null, query: null };
    await mocks.upsertMany(tenant, [
      { ...base, method: 'GET', path: '/v1/customers/cus_1', uri_template: '/v1/customers/{customer_id}', response: { status: 200, headers: { 'content-type': 'application/json' }, body: '{"id":"cus_1","template":true}' } },
      { ...base, method: 'GET', path: '/v1/customers/cus_vip', response: { status: 200, headers: { 'content-type': 'application/json' }, body: '{"id":"cus_vip"}' } },
      { ...base, method: 'GET', path: '/v1/search', query: { q: ['shoes'] }, response: { status: 200, headers: {}, body: 'shoes' } },
      { ...base, method: 'GET', path: '/v1/search', response: { status: 200, headers: {}, body: 'anything' } },
      { ...base, method: 'POST', path: '/v1/charges', body_matcher: { json: { amount: 100 } }, response: { status: 402, headers: { 'set-cookie': ['x=1', 'y=2'] }, body: { b64: Buffer.from([1, 2, 255]).toString('base64'), size_bytes: 3 } } },
    ]);
    assert.equal((await h.call('POST', '/v1/mode', { body: { mode: 'mock' } })).status, 200);
    upstream.server.close();
    upstream.server.closeAllConnections();
    const hitsBefore = upstream.hits;

    const vip = await send(h.agentUrl, { path: '/up/v1/customers/cus_vip' });
    assert.deepEqual(json(vip.body), { id: 'cus_vip' }, 'the exact entry wins');
    const templated = await send(h.agentUrl, { path: '/up/v1/customers/cus_42' });
    assert.equal(json(templated.body).template, true);
    assert.equal((await send(h.agentUrl, { path: '/up/v1/search?q=shoes' })).body.toString(), 'shoes');
    assert.equal((await send(h.agentUrl, { path: '/up/v1/search?q=hats' })).body.toString(), 'anything');
    const charge = await send(h.agentUrl, { method: 'POST', path: '/up/v1/charges', body: '{"amount": 100}', headers: { 'content-type': 'application/json' } });
    assert.equal(charge.status, 402);
    assert.deepEqual([...charge.body], [1, 2, 255]);
    assert.deepEqual(charge.headers['set-cookie'], ['x=1', 'y=2']);

    const miss = await send(h.agentUrl, { method: 'POST', path: '/up/v1/charges', body: '{"amount": 5}', headers: { 'content-type': 'application/json' } });
    assert.equal(miss.status, 404);
    const missBody = json(miss.body) as { error_code: string; near_misses: { differs: string[]; uri_template: string }[] };
    assert.equal(missBody.error_code, 'no_mock_match');
    assert.deepEqual(missBody.near_misses[0]!.differs, ['body']);
    const wrongSegment = json((await send(h.agentUrl, { path: '/up/v1/customer/cus_1' })).body) as { near_misses: { differs: string[] }[] };
    assert.match(wrongSegment.near_misses[0]!.differs.join(), /path segment 2 \(expected "customers", got "customer"\)/);
    assert.equal(upstream.hits, hitsBefore, 'MOCK never called the upstream');

    await h.agent.flush();
    const unmatched = await h.call('GET', '/mocks/unmatched');
    assert.equal(unmatched.status, 200);
    const shapes = unmatched.body.data as { path: string; count: number; method: string }[];
    assert.deepEqual(shapes.map((s) => `${s.method} ${s.path}`).sort(), ['GET /v1/customer/cus_1', 'POST /v1/charges']);
    const coverage = await h.call('GET', `/mocks/coverage?service_id=${svc}`);
    const rows = coverage.body.data as { method: string; uri_template: string; hits: number; misses: number; mocked: boolean }[];
    const find = (m: string, t: string) => rows.find((r) => r.method === m && r.uri_template === t)!;
    assert.deepEqual([find('GET', '/v1/customers/{customer_id}').hits, find('POST', '/v1/charges').hits, find('POST', '/v1/charges').misses], [1, 1, 1]);
    assert.equal(find('GET', '/v1/customer/cus_1').mocked, false);
  });

  it('answers in MOCK from a library committed just before the request, never the one it replaces', async () => {
    const { mocks, tenant } = h.runtime.cradle;
    // A library large enough that loading it takes longer than a request's round trip (on
    // PostgreSQL; PGlite runs its queries on this thread, so there the request waits anyway).
    const filler = Array.from({ length: 5000 }, (_, i) => ({ service_id: 'svc_filler', service_upstream_id: upstream.url, source: 'manual', scrubbed: true, body_matcher: null, query: null, method: 'GET', path: `/filler/${i}`, response: { status: 200, headers: {}, body: 'x'.repeat(200) } }));
    await mocks.upsertMany(tenant, filler);
    for (let i = 0; i < 5; i++) {
      await mocks.upsertMany(tenant, [{ service_id: svc, service_upstream_id: upstream.url, source: 'manual', scrubbed: true, body_matcher: null, query: null, method: 'GET', path: `/v1/just-committed/${i}`, response: { status: 200, headers: {}, body: `fresh ${i}` } }]);
      const res = await send(h.agentUrl, { path: `/up/v1/just-committed/${i}` });
      assert.deepEqual([res.status, res.body.toString()], [200, `fresh ${i}`]);
    }
  });

  it('reloads the library at once when it changes', async () => {
    const { mocks, tenant } = h.runtime.cradle;
    await mocks.upsertMany(tenant, [{ service_id: svc, service_upstream_id: upstream.url, source: 'manual', scrubbed: true, body_matcher: null, query: null, method: 'GET', path: '/v1/fresh', response: { status: 200, headers: {}, body: 'fresh' } }]);
    for (let i = 0; i < 20 && (await send(h.agentUrl, { path: '/up/v1/fresh' })).status !== 200; i++) await new Promise((r) => setTimeout(r, 50));
    assert.equal((await send(h.agentUrl, { path: '/up/v1/fresh' })).body.toString(), 'fresh');
    const onboarding = await h.call('GET', '/v1/onboarding/status');
    const done = (onboarding.body.steps as { id: string; done: boolean }[]).filter((s) => s.done).map((s) => s.id);
    assert.ok(done.includes('traffic_recorded') && done.includes('mock_served'), done.join());
  });

  it('captures webhooks whatever the mode, with the signature kind, and guards the path', async () => {
    const payload = '{"type":"charge.succeeded"}';
    const res = await send(h.agentUrl, { method: 'POST', path: `/webhook/default/${svc}?attempt=1`, headers: { 'content-type': 'application/json', 'Payments-Signature': 't=1,v1=abc' }, body: payload });
    assert.equal(res.status, 200);
    assert.deepEqual(json(res.body), { received: true });
    const gh = await send(h.agentUrl, { method: 'POST', path: `/webhook/default/${svc}`, headers: { 'X-Hub-Signature-256': 'sha256=00' }, body: Buffer.from([0xff, 0x00]) });
    assert.equal(gh.status, 200);
    const captures = lines<WebhookCapture>(path.join(h.dataDir, 'webhooks', `${svc}.jsonl`));
    assert.deepEqual(captures.map((c) => c.signature_kind), ['payments', 'github']);
    assert.match(captures[0]!.id, /^wh_[0-9a-f]{16}$/);
    assert.equal(captures[0]!.uri, `/webhook/default/${svc}?attempt=1`);
    assert.equal(captures[0]!.body, payload);
    assert.equal(captures[0]!.headers['payments-signature'], 't=1,v1=abc');
    assert.deepEqual(captures[1]!.body, { b64: Buffer.from([0xff, 0x00]).toString('base64'), size_bytes: 2 });
    assert.equal((await send(h.agentUrl, { method: 'POST', path: `/webhook/other/${svc}` })).status, 403);
    assert.equal((await send(h.agentUrl, { method: 'POST', path: '/webhook/default/svc_nope' })).status, 404);
    assert.equal((await send(h.agentUrl, { method: 'POST', path: '/webhook/default/..%2F..%2Fetc' })).status, 404);
    const { sync, agentData, tenant, store } = h.runtime.cradle;
    const report = await sync.runOnce();
    assert.equal(report.imported.webhooks, 2);
    // Deleted from the database while its line remains: the next sync brings it back (SPEC replay rule 5).
    assert.equal(await agentData.deleteWebhook(tenant, svc, captures[0]!.id), true);
    const count = async () => Number((await store.withTenant(tenant, (trx) => trx('webhooks').count({ n: '*' })))[0]!.n);
    assert.equal(await count(), 1);
    assert.equal((await sync.runOnce()).imported.webhooks, 1);
    assert.equal(await count(), 2);
  });

  it('skips and reports a torn line, and imports the lines around it', async () => {
    const file = path.join(h.dataDir, 'traffic', `${svc}.jsonl`);
    appendFileSync(file, '{"id":"tr_torn","tenant":"def');
    const valid: TrafficRecord = { id: 'tr_aftertorn', tenant: 'default', service_id: svc, recorded_at: new Date().toISOString(), mode: 'LEARN', request: { method: 'GET', uri: '/after', headers: {}, body: '' }, response: { status: 200, headers: {}, body: '' }, timings: { started_at: new Date().toISOString(), upstream_ms: 1, total_ms: 1 } };
    await h.runtime.cradle.sync.runOnce();
    appendFileSync(file, `\n${JSON.stringify(valid)}\n`);
    const report = await h.runtime.cradle.sync.runOnce();
    assert.equal(report.skipped.length, 1);
    assert.equal(report.imported.traffic, 1);
  });

  it('exposes metrics on the agent', async () => {
    const text = (await send(h.agentUrl, { path: '/metrics' })).body.toString();
    assert.match(text, /understudy_agent_requests_total\{service="svc_[^"]+",mode="MOCK",match="exact"\}/);
    assert.match(text, /service_io_errors_total\{operation="webhook_write"\} 0/);
    assert.match(text, /understudy_agent_library_entries \d+/);
  });
});

describe('agent faults: an unwritable data volume', () => {
  const suite = withUpstreamAndHarness();

  it('still answers callers and webhook senders, counts the failures and keeps running', async () => {
    const svc = String((await suite.h.call('POST', '/services', { body: { name: 'up', upstream_url: suite.upstream.url, routing_type: 'path_prefix', routing_value: '/up' } })).body.id);
    writeFileSync(path.join(suite.h.dataDir, 'traffic'), 'a file where the folder should be');
    mkdirSync(path.join(suite.h.dataDir, 'webhooks'), { recursive: true });
    symlinkSync('/dev/full', path.join(suite.h.dataDir, 'webhooks', `${svc}.jsonl`));
    assert.equal((await send(suite.h.agentUrl, { path: '/up/x' })).status, 201);
    await suite.h.agent.flush();
    const hook = await send(suite.h.agentUrl, { method: 'POST', path: `/webhook/default/${svc}`, body: '{}' });
    assert.equal(hook.status, 200);
    assert.deepEqual(json(hook.body), { received: true });
    assert.equal((await send(suite.h.agentUrl, { path: '/up/y' })).status, 201, 'still running');
    const text = (await send(suite.h.agentUrl, { path: '/metrics' })).body.toString();
    assert.match(text, /service_io_errors_total\{operation="traffic_mkdir"\} [1-9]/);
    assert.match(text, /service_io_errors_total\{operation="webhook_write"\} 1/);
  });
});

describe('agent with the database away', () => {
  const suite = withUpstreamAndHarness();

  it('keeps serving MOCK from memory and keeps recording LEARN traffic to files', async () => {
    const mocked = String((await suite.h.call('POST', '/services', { body: { name: 'm', upstream_url: suite.upstream.url, routing_type: 'path_prefix', routing_value: '/m', mode_override: 'mock' } })).body.id);
    const learned = String((await suite.h.call('POST', '/services', { body: { name: 'l', upstream_url: suite.upstream.url, routing_type: 'path_prefix', routing_value: '/l' } })).body.id);
    const { mocks, tenant, store } = suite.h.runtime.cradle;
    await mocks.upsertMany(tenant, [{ service_id: mocked, service_upstream_id: suite.upstream.url, source: 'manual', scrubbed: true, body_matcher: null, query: null, method: 'GET', path: '/a', response: { status: 200, headers: {}, body: 'from memory' } }]);
    for (let i = 0; i < 20 && (await send(suite.h.agentUrl, { path: '/m/a' })).status !== 200; i++) await new Promise((r) => setTimeout(r, 50));
    await store.knex.destroy();
    assert.equal((await send(suite.h.agentUrl, { path: '/m/a' })).body.toString(), 'from memory');
    assert.equal((await send(suite.h.agentUrl, { path: '/l/b' })).status, 201);
    await suite.h.agent.flush();
    assert.equal(lines<TrafficRecord>(path.join(suite.h.dataDir, 'traffic', `${learned}.jsonl`)).length, 1);
  });
});
