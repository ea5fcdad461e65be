import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { startHarness, type Harness } from '../helpers/harness.js';

const EMAIL = 'jane.routes@example.com';
const CONTENT_TYPES = ['application/json', 'application/x-www-form-urlencoded', 'text/plain', 'application/xml', 'image/png', 'application/octet-stream', 'multipart/form-data; boundary=x', ''];

/** An upstream on loopback that answers every request with a customer carrying an e-mail. */
function startUpstream(): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: req.url, email: EMAIL, ref: 'ord_123456' }));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })));
}

describe('scrub routes', () => {
  let h: Harness;
  let upstream: { server: Server; url: string };
  before(async () => {
    upstream = await startUpstream();
    h = await startHarness();
  });
  after(async () => {
    await h.close();
    upstream.server.close();
  });

  it('POST /v1/scrub/test scrubs a JSON value as JSON whatever the content-type says', async () => {
    const dry = await h.call('POST', '/v1/scrub/test', { body: { headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: { email: EMAIL, members: { [EMAIL]: 1 } } } });
    assert.equal(dry.status, 200, dry.text);
    const out = dry.body as { headers: Record<string, string>; body: { email: string; members: Record<string, number> }; findings: { path: string; rule: string }[] };
    assert.notEqual(out.body.email, EMAIL);
    assert.deepEqual(Object.keys(out.body.members), [out.body.email], 'a key is scrubbed to the pseudonym its value gets');
    assert.equal(out.headers['content-type'], 'application/json');
    assert.deepEqual(out.findings.map((f) => f.rule), ['email', 'email']);
    assert.ok(!dry.text.includes(EMAIL));
  });

  it('POST /v1/scrub/test never answers 500, whatever JSON body and content-type it is sent', async () => {
    const seen = new Set<number>();
    await fc.assert(
      fc.asyncProperty(fc.jsonValue({ maxDepth: 4 }), fc.constantFrom(...CONTENT_TYPES), fc.boolean(), async (value, type, asText) => {
        const body = asText ? JSON.stringify(value) : value;
        const res = await h.call('POST', '/v1/scrub/test', { body: { uri: '/x?a=1', headers: type ? { 'content-type': type } : {}, body } });
        seen.add(res.status);
        assert.ok(res.status === 200 || res.status === 422, `${res.status} ${res.text}`);
      }),
      { numRuns: 120, seed: 42 },
    );
    assert.ok(seen.has(200));
  });

  it('POST /v1/scrub/test: a deep JSON value is a 422, the same text is scrubbed as text and flagged, and bodies past 1 MiB are a 413', async () => {
    const deepText = `${'['.repeat(20_000)}"${EMAIL}"${']'.repeat(20_000)}`;
    const deep = await h.call('POST', '/v1/scrub/test', { rawBody: `{"body":${deepText}}`, headers: { 'content-type': 'application/json' } });
    assert.equal(deep.status, 422, deep.text);
    assert.match(String(deep.body.detail), /nests deeper than 100 levels/);
    const asText = await h.call('POST', '/v1/scrub/test', { body: { headers: { 'content-type': 'application/json' }, body: deepText } });
    assert.equal(asText.status, 200, asText.text);
    assert.ok(!asText.text.includes(EMAIL));
    assert.deepEqual((asText.body.findings as { rule: string }[]).map((f) => f.rule), ['email', 'unscrubbable_body']);
    const big = await h.call('POST', '/v1/scrub/test', { body: { body: 'x'.repeat(1024 * 1024) } });
    assert.equal(big.status, 413);
  });

  it('reads stored scrub rules that are no longer valid without failing: the valid part applies, GET /v1/scrub/config says what was left out, the log says where', async () => {
    const svc = await h.call('POST', '/services', { body: { name: 'shop', upstream_url: upstream.url, routing_type: 'path_prefix', routing_value: '/shop' } });
    const serviceId = String(svc.body.id);
    // Written as an old version (or a hand edit) would have: past PUT /config's checks.
    await h.runtime.cradle.tenantConfig.set('default', 'scrub_rules', {
      '*': { disable: 'email', patterns: { order_id: 'ord_[0-9]{6}', lookahead: '(?=STOREDPATTERN)x' } },
      [serviceId]: { keys: { ref: 'redact', note: 'shred' } },
    });
    const config = await h.call('GET', '/v1/scrub/config');
    assert.equal(config.status, 200, config.text);
    assert.deepEqual(config.body.problems, [
      'scrub_rules: *.disable: not a list of rule names; ignored (every rule applies)',
      'scrub_rules: *.patterns.lookahead: no longer a pattern the service runs (RE2 syntax, a program of at most 100 instructions, not matching the empty string); ignored',
      `scrub_rules: ${serviceId}.keys: 1 entry not a key name → pseudonymize | redact | keep, ignored`,
    ]);
    assert.deepEqual(config.body.scrub_rules, { '*': { patterns: { order_id: 'ord_[0-9]{6}' } }, [serviceId]: { keys: { ref: 'redact' } } });

    const dry = await h.call('POST', '/v1/scrub/test', { body: { service_id: serviceId, uri: '/v1/orders/ord_123456', body: { email: EMAIL, ref: 'ord_123456' } } });
    assert.equal(dry.status, 200, dry.text);
    const out = dry.body as { uri: string; body: { email: string; ref: string } };
    assert.notEqual(out.body.email, EMAIL, 'email is not disabled: the broken disable list is left out');
    assert.equal(out.body.ref, '[redacted]');
    assert.match(out.uri, /^\/v1\/orders\/ord_\d{6}$/);
    assert.notEqual(out.uri, '/v1/orders/ord_123456', 'the valid pattern still applies');

    for (let i = 0; i < 3; i++) await (await fetch(`${h.agentUrl}/shop/v1/orders/ord_00000${i}`)).arrayBuffer();
    await h.agent.flush();
    const norm = await h.call('POST', '/v1/traffic/normalize', { body: { service_id: serviceId } });
    assert.equal(norm.status, 200, norm.text);
    const start = await h.call('POST', '/v1/transition/start', { body: { service_id: serviceId } });
    assert.equal(start.status, 202, start.text);
    let job: Record<string, unknown> = {};
    for (let i = 0; i < 400 && !['succeeded', 'failed'].includes(String(job.status)); i++) {
      await new Promise((r) => setTimeout(r, 25));
      job = (await h.call('GET', `/v1/transition/${String(start.body.job_id)}/status`)).body;
    }
    assert.equal(job.status, 'succeeded', String(job.error));

    const warnings = h.logs.filter((l) => l.includes('stored config is no longer valid'));
    assert.ok(warnings.length > 0);
    assert.ok(warnings.every((l) => l.includes('lookahead') && !l.includes('STOREDPATTERN') && !l.includes('shred')), 'where, never what');
  });
});
