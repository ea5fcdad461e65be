import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { startHarness, type Harness } from '../helpers/harness.js';

/** An upstream on loopback that answers customer lookups carrying PII. */
function startUpstream(): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const id = /^\/v1\/customers\/([^/?]+)/.exec(req.url ?? '')?.[1];
    res.writeHead(200, { 'content-type': 'application/json', 'set-cookie': 'session=s3cr3t-session-value; Path=/' });
    res.end(JSON.stringify(id ? { id, object: 'customer', name: 'Jane Doe', email: `jane.${id}@example.org`, card: '4111 1111 1111 1111' } : { data: [], url: req.url }));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })));
}

/** Polls a job until it ends; returns every status seen. */
async function waitForJob(h: Harness, jobId: string): Promise<Record<string, unknown>[]> {
  const seen: Record<string, unknown>[] = [];
  for (let i = 0; i < 400; i++) {
    const res = await h.call('GET', `/v1/transition/${jobId}/status`);
    assert.equal(res.status, 200);
    seen.push(res.body);
    if (['succeeded', 'failed', 'cancelled'].includes(String(res.body.status))) return seen;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`job ${jobId} did not end: ${JSON.stringify(seen.at(-1))}`);
}

describe('transition over real sockets', () => {
  let h: Harness;
  let upstream: { server: Server; url: string };
  let serviceId: string;
  before(async () => {
    upstream = await startUpstream();
    h = await startHarness();
    const svc = await h.call('POST', '/services', { body: { name: 'crm', upstream_url: upstream.url, routing_type: 'path_prefix', routing_value: '/crm' } });
    serviceId = String(svc.body.id);
  });
  after(async () => {
    await h.close();
    upstream.server.close();
  });

  it('records, transitions (LEARN → TRANSITIONING → MOCK), and answers scrubbed, templated mocks', async () => {
    for (const id of ['cus_9s8d7f2k', 'cus_3jd82kd0', 'cus_ak29dj3l', 'cus_ppq0x8s1']) {
      const res = await fetch(`${h.agentUrl}/crm/v1/customers/${id}?expand=card`, { headers: { authorization: 'Bearer sk_live_4eC39HqLyjWDarjtT1zdp7dc' } });
      assert.equal(res.status, 200);
      await res.arrayBuffer();
    }
    await h.agent.flush();

    const start = await h.call('POST', '/v1/transition/start', { body: { service_id: serviceId }, headers: { 'Idempotency-Key': 'first-transition' } });
    assert.equal(start.status, 202, start.text);
    assert.match(String(start.body.job_id), /^job_[A-Za-z0-9]{20}$/);
    assert.equal(start.body.status, 'queued');
    const jobId = String(start.body.job_id);

    const seen = await waitForJob(h, jobId);
    const last = seen.at(-1)!;
    assert.equal(last.status, 'succeeded', JSON.stringify(last));
    assert.equal(last.progress, 1);
    assert.equal(last.current_stage, 'promote');
    assert.equal(last.records_total, 4);
    assert.equal(last.records_processed, 4);
    const progress = seen.map((s) => Number(s.progress));
    assert.deepEqual([...progress].sort((a, b) => a - b), progress, 'progress never goes back');
    const result = last.result as Record<string, unknown>;
    assert.equal(result.entries_created, 4);
    assert.equal(result.templated_endpoints, 1);

    // The same key: the same 202, no second job.
    const again = await h.call('POST', '/v1/transition/start', { body: { service_id: serviceId }, headers: { 'Idempotency-Key': 'first-transition' } });
    assert.equal(again.status, 202);
    assert.deepEqual(again.body, start.body);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(again.headers.get('location'), start.headers.get('location'), 'the stored answer keeps its headers');
    assert.match(String(again.headers.get('location')), /^\/v1\/transition\/job_\w+\/status$/);
    const jobs = await h.call('GET', '/v1/transition/jobs');
    assert.equal(jobs.body.total, 1);

    assert.equal((await h.call('GET', '/v1/mode')).body.mode, 'MOCK');
    // A recorded id answers from its own entry; an id never seen answers through the template.
    for (const path of ['/crm/v1/customers/cus_9s8d7f2k?expand=card', '/crm/v1/customers/cus_neverseen1?expand=card']) {
      const res = await fetch(h.agentUrl + path);
      const text = await res.text();
      assert.equal(res.status, 200, text);
      const body = JSON.parse(text) as Record<string, string>;
      assert.equal(body.object, 'customer');
      assert.doesNotMatch(text, /Jane Doe|example\.org|4111 1111 1111 1111/);
      assert.match(body.email!, /^[a-z]+\.[a-z]{3}_[0-9a-z]{8}@[a-z]+\.org$/);
      assert.ok(!res.headers.get('set-cookie')?.includes('s3cr3t-session-value'));
    }
    const entries = await h.runtime.cradle.mocks.all('default');
    assert.deepEqual([...new Set(entries.map((e) => e.uri_template))], ['/v1/customers/{customer_id}']);
    assert.ok(entries.every((e) => e.scrubbed && e.source === 'recorded' && /^traffic:tr_/.test(e.origin!)));
    assert.deepEqual(entries[0]!.query, { expand: ['card'] });
    const patterns = await h.runtime.cradle.endpointPatterns.ofService('default', serviceId);
    assert.equal(patterns.length, 1);
    assert.equal((patterns[0]!.response_schemas['200'] as { properties: Record<string, { format?: string }> }).properties.email!.format, 'email');
  });

  it('refuses a start outside LEARN (409 invalid_state) and a second start while one runs (503 transitioning)', async () => {
    const mock = await h.call('POST', '/v1/transition/start', { body: { service_id: serviceId } });
    assert.equal(mock.status, 409);
    assert.equal(mock.body.error_code, 'invalid_state');

    await h.call('POST', '/v1/mode', { body: { mode: 'learn' } });
    await h.runtime.cradle.transitions.stop(); // hold the job in the queue
    try {
      const first = await h.call('POST', '/v1/transition/start', { body: { service_id: serviceId } });
      assert.equal(first.status, 202);
      const second = await h.call('POST', '/v1/transition/start', { body: { service_id: serviceId }, headers: { 'Idempotency-Key': 'another' } });
      assert.equal(second.status, 503);
      assert.equal(second.body.error_code, 'transitioning');
      assert.ok(second.headers.get('retry-after'));
      const cancelled = await h.call('POST', `/v1/transition/${String(first.body.job_id)}/cancel`);
      assert.equal(cancelled.status, 202);
      assert.equal(cancelled.body.status, 'cancelled');
      assert.equal((await h.call('GET', '/v1/mode')).body.mode, 'LEARN');
      assert.equal((await h.call('POST', `/v1/transition/${String(first.body.job_id)}/cancel`)).body.error_code, 'invalid_state');
    } finally {
      h.runtime.cradle.transitions.start();
    }
    assert.equal((await h.call('GET', '/v1/transition/job_missing0000000000000/status')).status, 404);
    assert.equal((await h.call('POST', '/v1/transition/start', { body: { service_id: 'svc_missing' } })).status, 404);
  });

  it('normalize answers the endpoints found and stores their patterns; scrub config lists rules; scrub test stores nothing', async () => {
    const norm = await h.call('POST', '/v1/traffic/normalize', { body: { service_id: serviceId } });
    assert.equal(norm.status, 200, norm.text);
    assert.equal(norm.body.records, 4);
    const data = norm.body.data as { uri_template: string; query: Record<string, unknown> }[];
    assert.deepEqual(data.map((d) => d.uri_template), ['/v1/customers/{customer_id}']);
    assert.deepEqual(Object.keys(data[0]!.query), ['expand']);

    const config = await h.call('GET', '/v1/scrub/config');
    assert.equal(config.status, 200);
    const names = (config.body.rules as { name: string }[]).map((r) => r.name);
    for (const rule of ['email', 'card_number', 'authorization_header', 'jwt', 'custom_pattern']) assert.ok(names.includes(rule), rule);

    const put = await h.call('PUT', '/config/scrub_rules', { body: { value: { [serviceId]: { disable: ['ip_address'], keys: { internal_note: 'redact' }, patterns: { order_id: 'ord_[0-9]{6}' } } } } });
    assert.equal(put.status, 200, put.text);
    const bad = await h.call('PUT', '/config/scrub_rules', { body: { value: { '*': { patterns: { broken: '(' } } } } });
    assert.equal(bad.status, 422);
    assert.match(String(bad.body.detail), /patterns\.broken/);

    const before = (await h.call('GET', '/v1/activity')).body.total;
    const dry = await h.call('POST', '/v1/scrub/test', {
      body: { service_id: serviceId, uri: '/v1/orders/ord_123456?api_key=abcdefgh12345', headers: { Authorization: 'Bearer abc.def.ghi123456' }, body: { email: 'jane@example.org', ip: '203.0.113.7', internal_note: 'VIP', ref: 'ord_123456' } },
    });
    assert.equal(dry.status, 200, dry.text);
    const out = dry.body as { uri: string; body: Record<string, string>; findings: { path: string; rule: string }[] };
    assert.equal(out.body.ip, '203.0.113.7', 'ip_address is disabled for this service');
    assert.equal(out.body.internal_note, '[redacted]');
    assert.notEqual(out.body.email, 'jane@example.org');
    assert.match(out.body.ref!, /^ord_\d{6}$/);
    assert.notEqual(out.body.ref, 'ord_123456');
    assert.ok(out.uri.includes(out.body.ref!), 'the same id scrubs to the same pseudonym in the path and the body');
    assert.ok(out.findings.some((f) => f.path === 'query.api_key' && f.rule === 'secret_query_param'));
    assert.equal((await h.call('GET', '/v1/activity')).body.total, before, 'a dry run leaves no record');
  });
});
