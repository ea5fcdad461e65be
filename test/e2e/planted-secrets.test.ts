import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { luhnCheckDigit } from '../../kernel/scrub/pseudonym.js';
import { startHarness, type Harness } from '../helpers/harness.js';

const card = (() => {
  const body = '453201511283036';
  return `${body}${luhnCheckDigit(body)}`.replace(/(\d{4})(?=\d)/g, '$1 ');
})();

/** Every value planted in the recorded traffic; none may survive the transition anywhere. */
const PLANTED = {
  email: 'jane.planted@example.net',
  card,
  phone: '+1 (415) 555-0199',
  ssn: '219-09-9999',
  iban: 'GB82 WEST 1234 5698 7654 32',
  ip: '198.51.100.23',
  first_name: 'Plantedfirst',
  last_name: 'Plantedlast',
  street: '742 Plantedgreen Terrace',
  bearer: 'sk_live_PLANTEDtoken0123456789abcd',
  cookie: 'PLANTEDsessioncookie123',
  set_cookie: 'PLANTEDsetcookievalue456',
  api_key: 'PLANTEDapikey987654321',
  header_key: 'PLANTEDheaderkey555777',
  password: 'PLANTED-hunter2-pass',
  jwt: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJwbGFudGVkIn0.PLANTEDjwtsignature123',
  pem_body: 'MIIEvQIBADANBgkqhkiG9w0PLANTEDkeybody',
  github: 'ghp_PLANTED0123456789abcdefghijklmnopqrstu',
  aws: 'AKIAPLANTED123456789',
  // In a text body that is not UTF-8 (windows-1252), in JSON keys, in a query parameter's name,
  // and in JSON nested far past what a walk descends.
  latin_email: 'jos\xe9.planted@example.net',
  latin_card: '4532 0151 1283 0366',
  key_email: 'key.planted@example.org',
  key_token: 'sk_live_PLANTEDkeytoken0123456789',
  key_card: '4532015112830366',
  query_name: 'qname.planted@example.com',
  deep_email: 'deep.planted@example.com',
};

/** Bodies the walk could not read before: each must neither leak nor fail the transition. */
const HARD_BODIES: Record<string, { type: string; encoding?: string; body: () => Buffer }> = {
  '/v1/latin': { type: 'text/plain; charset=windows-1252', body: () => Buffer.from(`Caf\xe9 \x93${PLANTED.latin_email}\x94, card ${PLANTED.latin_card}`, 'latin1') },
  '/v1/members': { type: 'application/json', body: () => Buffer.from(JSON.stringify({ members: { [PLANTED.key_email]: { role: 'owner' }, [PLANTED.key_card]: 1 }, [PLANTED.key_token]: true })) },
  '/v1/deep': { type: 'application/json', body: () => Buffer.from(`${'['.repeat(20_000)}"${PLANTED.deep_email}"${']'.repeat(20_000)}`) },
  // 400 KB of gzip that inflates to 400 MB.
  '/v1/bomb': { type: 'text/plain', encoding: 'gzip', body: () => gzipSync(Buffer.alloc(400 * 1024 * 1024, ' ')) },
};

function startUpstream(): Promise<{ server: Server; url: string }> {
  const bodies = Object.fromEntries(Object.entries(HARD_BODIES).map(([at, b]) => [at, { ...b, bytes: b.body() }]));
  const server = createServer((req, res) => {
    req.resume();
    const hard = bodies[(req.url ?? '').split('?')[0]!];
    if (hard) {
      res.writeHead(200, { 'content-type': hard.type, ...(hard.encoding && { 'content-encoding': hard.encoding }) });
      return res.end(hard.bytes);
    }
    res.writeHead(200, { 'content-type': 'application/json', 'set-cookie': `sid=${PLANTED.set_cookie}; Path=/; HttpOnly` });
    res.end(
      JSON.stringify({
        id: req.url,
        customer: { first_name: PLANTED.first_name, last_name: PLANTED.last_name, email: PLANTED.email, phone: PLANTED.phone, ssn: PLANTED.ssn, address: { line1: PLANTED.street, city: 'Springfield' } },
        payment: { card: PLANTED.card, iban: PLANTED.iban },
        seen_from: PLANTED.ip,
        note: `keys: ${PLANTED.github} ${PLANTED.aws}\n-----BEGIN RSA PRIVATE KEY-----\n${PLANTED.pem_body}\n-----END RSA PRIVATE KEY-----`,
      }),
    );
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })));
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? filesUnder(full) : [full];
  });
}

/** The text and every base64 run in it read as windows-1252 bytes, so values in `{b64}` bodies are searched too. */
const withBase64 = (text: string) => [text, ...(text.match(/[A-Za-z0-9+/]{16,}={0,2}/g) ?? []).map((run) => Buffer.from(run, 'base64').toString('latin1'))].join('\n');
const leaks = (where: string, text: string) => {
  const all = withBase64(text);
  return Object.entries(PLANTED).filter(([, v]) => all.includes(v) || all.includes(encodeURIComponent(v))).map(([k]) => `${k} in ${where}`);
};

describe('nothing planted in recorded traffic survives the transition', () => {
  let h: Harness;
  let upstream: { server: Server; url: string };
  before(async () => {
    upstream = await startUpstream();
    h = await startHarness({ env: { LOG_LEVEL: 'debug' } });
  });
  after(async () => {
    await h.close();
    upstream.server.close();
  });

  it('leaves no planted value in any table but the raw traffic, in any file but the recordings, nor in the logs', async () => {
    const svc = await h.call('POST', '/services', { body: { name: 'crm', upstream_url: upstream.url, routing_type: 'path_prefix', routing_value: '/crm' } });
    const serviceId = String(svc.body.id);
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${h.agentUrl}/crm/v1/customers/${1000 + i}?api_key=${PLANTED.api_key}&email=${encodeURIComponent(PLANTED.email)}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${PLANTED.bearer}`, cookie: `session=${PLANTED.cookie}`, 'x-api-key': PLANTED.header_key, 'content-type': 'application/json' },
        body: JSON.stringify({ password: PLANTED.password, token: PLANTED.jwt, contact: PLANTED.email }),
      });
      await res.arrayBuffer();
    }
    for (const at of Object.keys(HARD_BODIES)) {
      const res = await fetch(`${h.agentUrl}/crm${at}?${encodeURIComponent(PLANTED.query_name)}=1&limit=5`, { headers: { 'accept-encoding': 'gzip' } });
      assert.equal(res.status, 200);
      await res.arrayBuffer();
    }
    await h.agent.flush();
    const start = await h.call('POST', '/v1/transition/start', { body: { service_id: serviceId } });
    assert.equal(start.status, 202);
    let job: Record<string, unknown> = {};
    for (let i = 0; i < 400 && !['succeeded', 'failed'].includes(String(job.status)); i++) {
      await new Promise((r) => setTimeout(r, 25));
      job = (await h.call('GET', `/v1/transition/${String(start.body.job_id)}/status`)).body;
    }
    assert.equal(job.status, 'succeeded', String(job.error));
    assert.equal((job.result as { entries_created: number }).entries_created, 5 + Object.keys(HARD_BODIES).length, 'the bomb and the deep body fail nothing');
    const findings = (job.result as { findings: Record<string, number> }).findings;
    assert.equal(findings.unscrubbable_body, 2, 'the bomb and the deep body are flagged');
    await h.call('POST', '/v1/traffic/normalize', { body: { service_id: serviceId } });

    // An answer in MOCK mode, the exports, the offline transition's library file, and every table.
    const mock = await fetch(`${h.agentUrl}/crm/v1/customers/1000?api_key=whatever`, { method: 'POST' });
    const found: string[] = leaks('a MOCK answer', `${JSON.stringify([...mock.headers])}${await mock.text()}`);
    assert.equal(mock.status, 200);
    const trafficFile = path.join(h.dataDir, 'traffic', `${serviceId}.jsonl`);
    const offline = spawnSync(process.execPath, [new URL('../../adapters/cli/main.js', import.meta.url).pathname, 'transition', '--traffic', trafficFile, '--service', serviceId], {
      env: { ...process.env, SERVICE_DATA_DIR: h.dataDir, SERVICE_WORKERS: '1' },
      encoding: 'utf8',
    });
    assert.equal(offline.status, 0, offline.stderr);
    found.push(...leaks('the offline library', offline.stdout + offline.stderr));

    for (const format of ['native', 'har', 'wiremock']) {
      const exported = await h.call('GET', `/mocks/export?format=${format}`);
      assert.equal(exported.status, 200);
      assert.ok(exported.text.length > 1000);
      found.push(...leaks(`the ${format} export`, exported.text));
    }
    const store = h.runtime.cradle.store;
    const tables = (await store.knex.raw("SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'")) as { rows: { table_name: string }[] };
    assert.ok(tables.rows.length >= 15);
    for (const { table_name: table } of tables.rows) {
      const rows = await store.knex(table).select('*');
      const text = JSON.stringify(rows);
      // The raw recording is the input: it holds every value, which shows the search works.
      if (table === 'traffic') assert.deepEqual(leaks(table, text).length, Object.keys(PLANTED).length, 'the recording holds every planted value');
      else found.push(...leaks(`table ${table}`, text));
    }
    for (const file of filesUnder(h.dataDir)) {
      const text = readFileSync(file, 'utf8');
      if (file === trafficFile) assert.ok(leaks(file, text).length > 0);
      else found.push(...leaks(file, text));
    }
    found.push(...leaks('the logs', h.logs.join('\n')));
    assert.deepEqual(found, []);
  });
});
