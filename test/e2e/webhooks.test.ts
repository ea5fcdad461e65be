import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sign as githubSign, verify as githubVerify } from '@octokit/webhooks-methods';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import Stripe from 'stripe';
import type { RecordedBody } from '../../kernel/domain/index.js';
import { startHarness, type Harness } from '../helpers/harness.js';

const PAYMENTS_SECRET = 'whsec_payments_test_secret';
const GITHUB_SECRET = 'github-webhook-secret';
const STANDARD_SECRET = `whsec_${randomBytes(24).toString('base64')}`;
// Building a client sends nothing; only its webhook helpers are used.
const stripe = new Stripe('sk_test_not_used');

const SIGNATURE_HEADERS = ['payments-signature', 'x-hub-signature-256', 'x-hub-signature', 'webhook-signature'];

interface Seen {
  path: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

/** A receiver on loopback that verifies each request with the scheme's own library, as a real one would. */
async function verifyRequest(headers: IncomingMessage['headers'], body: Buffer): Promise<string> {
  if (headers['payments-signature']) {
    stripe.webhooks.signature!.verifyHeader(body, String(headers['payments-signature']), PAYMENTS_SECRET);
    return 'payments';
  }
  if (headers['x-hub-signature-256']) {
    if (!(await githubVerify(GITHUB_SECRET, body.toString('utf8'), String(headers['x-hub-signature-256'])))) throw new Error('github signature mismatch');
    return 'github';
  }
  if (headers['webhook-signature']) {
    const signatureHeaders = { 'webhook-id': String(headers['webhook-id']), 'webhook-timestamp': String(headers['webhook-timestamp']), 'webhook-signature': String(headers['webhook-signature']) };
    new StandardWebhook(STANDARD_SECRET).verify(body, signatureHeaders, { jsonParse: false });
    return 'standard';
  }
  throw new Error('no signature header');
}

function startReceiver(): Promise<{ server: Server; url: string; seen: Seen[]; connections: () => number }> {
  const seen: Seen[] = [];
  let connections = 0;
  const big = Buffer.alloc(2 * 1024 * 1024, 0x61);
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      seen.push({ path: req.url ?? '', headers: req.headers, body });
      if (req.url === '/hang') return; // never answers
      if (req.url === '/big') return res.end(big);
      if (req.url === '/redirect') {
        res.writeHead(302, { location: `http://127.0.0.1:${(server.address() as AddressInfo).port}/after-redirect` });
        return res.end();
      }
      verifyRequest(req.headers, body).then(
        (scheme) => {
          res.writeHead(200, { 'content-type': 'application/json', 'x-receiver': 'yes' });
          res.end(JSON.stringify({ verified: scheme }));
        },
        (err: Error) => {
          res.writeHead(400, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ verified: false, error: err.message }));
        },
      );
    });
  });
  server.on('connection', () => connections++);
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, connections: () => connections })));
}

const BODIES: Record<string, Buffer> = {
  unicode: Buffer.from('{"customer":"Zoë Ångström","city":"東京","note":"naïve — ✓ 🚀"}', 'utf8'),
  crlf: Buffer.from('{"a":1}\r\nline two\r\n\r\nlast\r\n', 'utf8'),
  'non-utf8': Buffer.from([0x7b, 0xff, 0xfe, 0x00, 0x80, 0xc3, 0x28, 0xa0, 0xa1, 0x7d]),
  empty: Buffer.alloc(0),
  '1MiB': Buffer.from(JSON.stringify({ blob: 'x'.repeat(1024 * 1024 - 12) }), 'utf8'),
};

/**
 * Bodies a scheme's real libraries cannot carry: Stripe's verifier decodes the payload as UTF-8
 * and octokit signs only non-empty strings (both senders only ever send JSON). Standard Webhooks
 * works on bytes and takes every body.
 */
const UNSIGNABLE: Record<string, readonly string[]> = { payments: ['non-utf8'], github: ['non-utf8', 'empty'], standard: [] };

/** Signature headers for a body, made by the library each scheme's senders use. */
async function signed(scheme: 'payments' | 'github' | 'standard', body: Buffer): Promise<Record<string, string>> {
  const text = body.toString('utf8');
  if (scheme === 'payments') {
    if (text === '') {
      // Stripe's generator refuses an empty payload; the header is the documented t=,v1= HMAC.
      const t = Math.floor(Date.now() / 1000);
      return { 'Payments-Signature': `t=${t},v1=${createHmac('sha256', PAYMENTS_SECRET).update(`${t}.`).digest('hex')}` };
    }
    return { 'Payments-Signature': stripe.webhooks.generateTestHeaderString({ payload: text, secret: PAYMENTS_SECRET }) };
  }
  if (scheme === 'github') return { 'X-Hub-Signature-256': await githubSign(GITHUB_SECRET, text), 'X-GitHub-Delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0958', 'X-GitHub-Event': 'push' };
  const id = `msg_${randomBytes(8).toString('hex')}`;
  const now = new Date();
  return { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(now.getTime() / 1000)), 'webhook-signature': new StandardWebhook(STANDARD_SECRET).sign(id, now, body) };
}

const bodyBytes = (b: RecordedBody) => (typeof b === 'string' ? Buffer.from(b, 'utf8') : Buffer.from(b.b64, 'base64'));

describe('webhooks: capture, read, replay with real signers', () => {
  let h: Harness;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let svc: string;

  /** Posts a webhook to the agent's capture endpoint and answers the new capture's id. */
  async function capture(headers: Record<string, string>, body: Buffer, query = ''): Promise<string> {
    const res = await fetch(`${h.agentUrl}/webhook/default/${svc}${query}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    assert.equal(res.status, 200);
    const list = await h.call('GET', `/v1/webhooks/${svc}?limit=1`);
    return (list.body.data as { id: string }[])[0]!.id;
  }
  const replay = (id: string, body: unknown) => h.call('POST', `/v1/webhooks/${svc}/${id}/replay`, { body });

  before(async () => {
    receiver = await startReceiver();
    h = await startHarness({ env: { SERVICE_ALLOW_LOCAL_REPLAY: '1' } });
    svc = (await h.call('POST', '/services', { body: { name: 'hooks', upstream_url: 'http://127.0.0.1:9', routing_type: 'path_prefix', routing_value: '/hooks' } })).body.id as string;
  });
  after(async () => {
    await h.close();
    receiver.server.closeAllConnections();
    receiver.server.close();
  });

  for (const scheme of ['payments', 'github', 'standard'] as const) {
    it(`replays ${scheme} webhooks byte-exact, and the receiver verifies every signature with the real library`, async () => {
      for (const [name, body] of Object.entries(BODIES)) {
        if (UNSIGNABLE[scheme]!.includes(name)) continue;
        const id = await capture(await signed(scheme, body), body, '?source=test');
        const detail = await h.call('GET', `/v1/webhooks/${svc}/${id}`);
        assert.equal(detail.body.signature_kind, scheme, name);
        assert.ok(bodyBytes(detail.body.body as RecordedBody).equals(body), `${scheme}/${name}: capture is byte-exact`);
        if (name === 'non-utf8') assert.deepEqual(detail.body.body, { b64: body.toString('base64'), size_bytes: body.length });

        const before = receiver.seen.length;
        const res = await replay(id, { target_url: `${receiver.url}/verify?from=understudy` });
        assert.equal(res.status, 200, `${scheme}/${name}: ${res.text}`);
        assert.equal(res.body.status_code, 200, `${scheme}/${name}: receiver said ${JSON.stringify(res.body.response_body)}`);
        assert.deepEqual(JSON.parse(res.body.response_body as string), { verified: scheme });
        assert.equal((res.body.response_headers as Record<string, string>)['x-receiver'], 'yes');
        assert.equal(res.body.response_truncated, false);
        assert.equal(typeof res.body.elapsed_ms, 'number');
        const got = receiver.seen[before]!;
        assert.equal(got.path, '/verify?from=understudy');
        assert.ok(got.body.equals(body), `${scheme}/${name}: receiver got the same bytes`);
        assert.equal(got.headers.host, new URL(receiver.url).host, 'Host is the target, not the captured one');
        assert.equal(got.headers['content-length'], String(body.length));
        assert.equal(got.headers['content-type'], 'application/json');
      }
    });
  }

  it('strips every signature header when preserve_signature is false, and never re-signs', async () => {
    const body = BODIES.unicode!;
    for (const scheme of ['payments', 'github', 'standard'] as const) {
      const id = await capture(await signed(scheme, body), body);
      const before = receiver.seen.length;
      const res = await replay(id, { target_url: `${receiver.url}/verify`, preserve_signature: false });
      assert.equal(res.body.status_code, 400);
      const got = receiver.seen[before]!;
      assert.deepEqual(SIGNATURE_HEADERS.filter((name) => name in got.headers), [], scheme);
      assert.ok(got.body.equals(body));
    }
  });

  it('strips hop-by-hop headers and keeps the rest', async () => {
    // fetch may not send Connection; a raw request can.
    const sent = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(`${h.agentUrl}/webhook/default/${svc}`, { method: 'POST', headers: { 'x-custom': 'kept', 'x-drop-me': 'gone', connection: 'x-drop-me', 'proxy-authorization': 'Basic c2VjcmV0', 'user-agent': 'sender/1.0' } }, (res) => {
        res.resume();
        resolve(res.statusCode!);
      });
      req.on('error', reject);
      req.end('{}');
    });
    assert.equal(sent, 200);
    const id = ((await h.call('GET', `/v1/webhooks/${svc}?limit=1`)).body.data as { id: string }[])[0]!.id;
    const before = receiver.seen.length;
    await replay(id, { target_url: `${receiver.url}/plain` });
    const got = receiver.seen[before]!.headers;
    assert.equal(got['x-custom'], 'kept');
    assert.equal(got['x-drop-me'], undefined, 'a header named by Connection is hop-by-hop');
    assert.equal(got['proxy-authorization'], undefined);
    assert.equal(got['user-agent'], 'sender/1.0', 'the captured User-Agent is replayed');
  });

  it('lists captures newest first with paging and a signature_kind filter, and parses each scheme', async () => {
    const all = await h.call('GET', `/v1/webhooks/${svc}?limit=500`);
    const data = all.body.data as { id: string; received_at: string; signature_kind: string }[];
    assert.equal(all.body.total, data.length);
    assert.ok(data.length >= 14);
    assert.deepEqual([...data].sort((a, b) => b.received_at.localeCompare(a.received_at)).map((d) => d.received_at), data.map((d) => d.received_at));
    const page = await h.call('GET', `/v1/webhooks/${svc}?limit=2&offset=1`);
    assert.deepEqual((page.body.data as { id: string }[]).map((d) => d.id), data.slice(1, 3).map((d) => d.id));
    assert.equal(page.body.has_more, true);
    const githubOnly = await h.call('GET', `/v1/webhooks/${svc}?signature_kind=github&limit=500`);
    assert.ok((githubOnly.body.data as { signature_kind: string }[]).every((d) => d.signature_kind === 'github'));
    assert.equal((await h.call('GET', `/v1/webhooks/${svc}?signature_kind=nope`)).status, 422);
    assert.equal((await h.call('GET', '/v1/webhooks/svc_never_registered')).status, 404);
    assert.equal((await h.call('GET', '/v1/webhooks/svc_never_registered?signature_kind=github')).status, 404);
    // A deleted service's captures stay listable, also through a filter that matches none of them.
    const gone = (await h.call('POST', '/services', { body: { name: 'gone', upstream_url: 'http://127.0.0.1:9', routing_type: 'path_prefix', routing_value: '/gone' } })).body.id as string;
    assert.equal((await fetch(`${h.agentUrl}/webhook/default/${gone}`, { method: 'POST', body: '{}' })).status, 200);
    assert.equal((await h.call('DELETE', `/services/${gone}`)).status, 204);
    assert.equal((await h.call('GET', `/v1/webhooks/${gone}`)).body.total, 1);
    const none = await h.call('GET', `/v1/webhooks/${gone}?signature_kind=github`);
    assert.deepEqual([none.status, none.body.total], [200, 0]);

    const byKind = (kind: string) => data.find((d) => d.signature_kind === kind)!.id;
    const parsed = async (id: string) => (await h.call('GET', `/v1/webhooks/${svc}/${id}`)).body.parsed_signature as Record<string, unknown> | null;
    const payments = await parsed(byKind('payments'));
    assert.equal(payments!.scheme, 'payments');
    assert.ok(Math.abs((payments!.timestamp as number) - Date.now() / 1000) < 120);
    assert.deepEqual([payments!.signature_count, payments!.versions], [1, ['v1']]);
    const standard = await parsed(byKind('standard'));
    assert.match(standard!.nonce as string, /^msg_/);
    assert.deepEqual([standard!.signature_count, standard!.versions], [1, ['v1']]);
    const github = (await parsed(byKind('github')))!;
    assert.deepEqual([github.nonce, github.versions, github.timestamp], ['72d3162e-cc78-11e3-81ab-4c9367dc0958', ['sha256'], null]);
    assert.equal(await parsed(byKind('generic')), null);
  });

  it('caps the target answer at 1 MiB, reports a timeout or an unreachable target as 502, and does not follow redirects', async () => {
    const id = await capture({}, Buffer.from('{"n":1}'));
    const big = await replay(id, { target_url: `${receiver.url}/big` });
    assert.equal(big.body.response_truncated, true);
    assert.equal(bodyBytes(big.body.response_body as RecordedBody).length, 1024 * 1024);

    const started = Date.now();
    const slow = await replay(id, { target_url: `${receiver.url}/hang`, timeout_seconds: 1 });
    assert.deepEqual([slow.status, slow.body.error_code], [502, 'replay_upstream_error']);
    assert.ok(Date.now() - started < 5000, 'the timeout bounds the replay');
    assert.match(slow.body.detail as string, /no answer within 1 s/);

    const closed = createServer();
    const port = await new Promise<number>((r) => closed.listen(0, '127.0.0.1', () => r((closed.address() as AddressInfo).port)));
    closed.close();
    const refused = await replay(id, { target_url: `http://127.0.0.1:${port}/` });
    assert.deepEqual([refused.status, refused.body.error_code], [502, 'replay_upstream_error']);

    const before = receiver.seen.length;
    const redirected = await replay(id, { target_url: `${receiver.url}/redirect` });
    assert.equal(redirected.body.status_code, 302);
    assert.equal(receiver.seen.length, before + 1, 'the Location was not followed');
  });

  it('leaves an activity record per replay, naming the target by its origin only (paths and queries carry tokens)', async () => {
    const id = await capture({}, Buffer.from('{}'));
    await replay(id, { target_url: `${receiver.url}/services/T000/B000/s3cret-path?token=s3cret-token` });
    const activity = await h.call('GET', '/v1/activity?limit=5');
    const entry = (activity.body.data as { action: string; detail: Record<string, unknown> }[]).find((a) => a.action.endsWith('/replay'))!;
    assert.equal(entry.detail.webhook_id, id);
    assert.equal(entry.detail.target, receiver.url);
    assert.doesNotMatch(activity.text, /s3cret/);
  });

  it('deletes from the database only: the sync layer brings a capture back while its line remains', async () => {
    const id = await capture({}, Buffer.from('{"delete":"me"}'));
    const del = await h.call('DELETE', `/v1/webhooks/${svc}/${id}`);
    assert.equal(del.status, 204);
    // The next sync run (each read runs one) re-imports it from its line.
    assert.equal((await h.call('GET', `/v1/webhooks/${svc}/${id}`)).status, 200);

    const file = path.join(h.dataDir, 'webhooks', `${svc}.jsonl`);
    writeFileSync(file, readFileSync(file, 'utf8').split('\n').filter((l) => !l.includes(id)).join('\n'));
    assert.equal((await h.call('DELETE', `/v1/webhooks/${svc}/${id}`)).status, 204);
    assert.equal((await h.call('GET', `/v1/webhooks/${svc}/${id}`)).status, 404);
    assert.equal((await h.call('DELETE', `/v1/webhooks/${svc}/${id}`)).status, 404);
  });

  it("answers 404 on every route for another tenant's capture, a missing one and malformed ids", async () => {
    const foreign = `wh_${randomBytes(8).toString('hex')}`;
    const line = { id: foreign, received_at: new Date().toISOString(), tenant: 'other-tenant', service_id: svc, method: 'POST', uri: `/webhook/other-tenant/${svc}`, headers: {}, body: '{}', signature_kind: 'generic' };
    appendFileSync(path.join(h.dataDir, 'webhooks', `${svc}.jsonl`), `${JSON.stringify(line)}\n`);
    await h.runtime.cradle.sync.runOnce();
    const ids = [foreign, 'wh_0000000000000000', 'wh_..%2F..%2Fetc', '..%2F..%2Fpasswd', 'wh_ABCDEF0123456789', 'wh_%00'];
    const before = receiver.connections();
    for (const id of ids) {
      for (const [method, suffix, body] of [['GET', '', undefined], ['DELETE', '', undefined], ['POST', '/replay', { target_url: `${receiver.url}/x` }]] as const) {
        const res = await h.call(method, `/v1/webhooks/${svc}/${id}${suffix}`, { body });
        assert.deepEqual([res.status, res.body.error_code], [404, 'not_found'], `${method} ${id}${suffix}`);
      }
    }
    assert.equal((await h.call('GET', `/v1/webhooks/..%2F${svc}`)).status, 404);
    assert.equal(receiver.connections(), before, 'no replay reached the receiver');
  });

  it('refuses malformed replay bodies with 422 before any connection', async () => {
    const id = await capture({}, Buffer.from('{}'));
    const target = `${receiver.url}/x`;
    const cases: [string, unknown, number][] = [
      ['no body', undefined, 422],
      ['empty object', {}, 422],
      ['target_url null', { target_url: null }, 422],
      ['target_url number', { target_url: 80 }, 422],
      ['target_url empty', { target_url: '' }, 422],
      ['target_url relative', { target_url: '/x' }, 422],
      ['target_url ftp', { target_url: 'ftp://127.0.0.1/' }, 422],
      ['target_url too long', { target_url: `${target}?${'a'.repeat(2100)}` }, 422],
      ['timeout 0', { target_url: target, timeout_seconds: 0 }, 422],
      ['timeout 61', { target_url: target, timeout_seconds: 61 }, 422],
      ['timeout "10"', { target_url: target, timeout_seconds: '10' }, 422],
      ['timeout null', { target_url: target, timeout_seconds: null }, 422],
      ['timeout 1.5', { target_url: target, timeout_seconds: 1.5 }, 422],
      ['preserve_signature "false"', { target_url: target, preserve_signature: 'false' }, 422],
      ['unknown field', { target_url: target, resign: true }, 422],
      ['array', [target], 422],
    ];
    const before = receiver.connections();
    for (const [name, body, status] of cases) {
      const res = await h.call('POST', `/v1/webhooks/${svc}/${id}/replay`, { body });
      assert.deepEqual([res.status, res.body.error_code], [status, 'validation_error'], name);
    }
    const text = await h.call('POST', `/v1/webhooks/${svc}/${id}/replay`, { rawBody: '{"target_url": ', headers: { 'content-type': 'application/json' } });
    assert.equal(text.status, 422);
    assert.equal(receiver.connections(), before, 'no malformed replay opened a connection');
  });
});
