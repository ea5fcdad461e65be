import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ScrubContext } from '../../kernel/contracts/index.js';
import { newPseudonymKey } from '../../kernel/scrub/pseudonym.js';
import credentials from '../../plugins/scrubbers/credentials/index.js';
import pii from '../../plugins/scrubbers/pii/index.js';
import { trafficRecord } from '../helpers/traffic.js';
import { gzipSync } from 'node:zlib';

const ctx: ScrubContext = { tenantKey: newPseudonymKey(), rules: { disable: [], keys: {}, patterns: {} } };
const P = await pii.setup({ options: {} as never, get: () => undefined as never });
const C = await credentials.setup({ options: {} as never, get: () => undefined as never });

/** The rules that fire on a text body, in order. */
const rulesIn = (text: string, s = P) => s.scrub(trafficRecord({ uri: '/', response: { headers: { 'content-type': 'text/plain' }, body: text } }), ctx).findings.map((f) => f.rule);

describe('scrubber/pii', () => {
  it('finds PII by shape anywhere, and checks what can be checked', () => {
    assert.deepEqual(rulesIn('mail jane.doe+x@mail.example.co.uk now'), ['email']);
    assert.deepEqual(rulesIn('next: /v1/users?email=jane.doe%40example.com&page=2, 100%40 off'), ['email'], 'percent-encoded in a link');
    assert.deepEqual(rulesIn('card 4111-1111-1111-1111 and 4111-1111-1111-1112'), ['card_number'], 'Luhn decides');
    assert.deepEqual(rulesIn('at 1700000000000 ms, id 1234567890123456789'), [], 'timestamps and snowflake ids are not cards');
    assert.deepEqual(rulesIn('call (415) 555-0100 or +44 20 7946 0958'), ['phone', 'phone']);
    assert.deepEqual(rulesIn('ssn 219-09-9999, not 000-12-3456, date 2024-01-05'), ['national_id']);
    assert.deepEqual(rulesIn('iban GB82 WEST 1234 5698 7654 32 / GB00 WEST 1234 5698 7654 32'), ['iban']);
    assert.deepEqual(rulesIn('from 203.0.113.9 and 2001:db8:85a3::8a2e:370:7334, Chrome/120.0.0.0'), ['ip_address', 'ip_address']);
  });

  it('gives an e-mail the same pseudonym percent-encoded as plain', () => {
    const out = P.scrub(trafficRecord({ uri: '/', response: { headers: { 'content-type': 'text/plain' }, body: 'jane@example.com /u?e=jane%40example.com' } }), ctx).record.response!.body as string;
    const [plain, encoded] = out.split(' /u?e=');
    assert.equal(encoded, plain!.replace('@', '%40'));
    assert.notEqual(plain, 'jane@example.com');
  });

  it('reads names, addresses, birth dates and ids from the keys that hold them, and `name` only for a person', () => {
    const record = trafficRecord({
      uri: '/',
      response: { body: { customer: { name: 'Jane Doe', email: 'x@example.com', address: { line1: '1 Main St', city: 'Springfield', postal_code: '12345' }, dob: '1990-04-01', tax_id: 'AB123' }, product: { name: 'Gold Plan', price: 10 } } },
    });
    const out = P.scrub(record, ctx);
    const body = JSON.parse(String(out.record.response!.body)) as { customer: Record<string, unknown>; product: { name: string } };
    assert.equal(body.product.name, 'Gold Plan');
    assert.equal((body.customer.address as { city: string }).city, 'Springfield');
    assert.match(String(body.customer.dob), /^\d{4}-\d{2}-\d{2}$/);
    assert.deepEqual(out.findings.map((f) => `${f.path} ${f.rule}`).sort(), [
      'response.body.customer.address.line1 postal_address',
      'response.body.customer.address.postal_code postal_address',
      'response.body.customer.dob birth_date',
      'response.body.customer.email email',
      'response.body.customer.name person_name',
      'response.body.customer.tax_id national_id',
    ]);
  });

  it('scrubs compressed bodies (kept decompressed), paths and query strings; the same value maps to one pseudonym', () => {
    const record = trafficRecord({ uri: '/v1/users/jane%40example.com?email=jane%40example.com', response: { headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: { b64: gzipSync('{"email":"jane@example.com"}').toString('base64'), size_bytes: 0 } } });
    const out = P.scrub(record, ctx).record;
    const pseudonym = (JSON.parse(String(out.response!.body)) as { email: string }).email;
    assert.notEqual(pseudonym, 'jane@example.com');
    assert.equal(out.response!.headers['content-encoding'], undefined);
    assert.equal(out.request.uri, `/v1/users/${pseudonym}?email=${encodeURIComponent(pseudonym)}`);
  });
});

describe('scrubber/credentials', () => {
  it('replaces credentials in headers, keeping the scheme, cookie names and attributes', () => {
    const record = trafficRecord({
      uri: '/x?api_key=xyz12345&limit=10',
      request: { headers: { authorization: 'Basic dXNlcjpwYXNz', cookie: 'sid=abc123; theme=dark', 'x-api-key': 'k-123456', 'user-agent': 'curl/8' } },
      response: { headers: { 'set-cookie': ['sid=zzz999; Path=/; HttpOnly'], 'stripe-signature': 't=1,v1=abc' } },
    });
    const out = C.scrub(record, ctx);
    const h = out.record.request.headers;
    assert.match(String(h.authorization), /^Basic [A-Za-z0-9]{12}$/);
    assert.match(String(h.cookie), /^sid=[a-z0-9]{6}; theme=[a-z]{4}$/);
    assert.equal(h['user-agent'], 'curl/8');
    assert.match(String((out.record.response!.headers['set-cookie'] as string[])[0]), /^sid=[a-z]{3}\d{3}; Path=\/; HttpOnly$/);
    assert.match(out.record.request.uri, /^\/x\?api_key=[a-z]{3}\d{5}&limit=10$/);
    assert.deepEqual(out.findings.map((f) => f.rule).sort(), ['authorization_header', 'cookie', 'cookie', 'secret_header', 'secret_header', 'secret_query_param']);
  });

  it('finds tokens by format anywhere and JSON secrets by key', () => {
    const text = 'k=sk_live_4eC39HqLyjWDarjtT1zdp7dc gh=ghp_0123456789abcdefghijABCDEFGHIJ012345 aws=AKIAIOSFODNN7EXAMPLE jwt=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig_nature -----BEGIN PRIVATE KEY-----\nMIIBVQ\n-----END PRIVATE KEY----- https://u:hunter2@db.example.com next=https://api.example.com/items?page=2&token=abcdef123';
    assert.deepEqual(rulesIn(text, C), ['token_format', 'token_format', 'token_format', 'jwt', 'private_key', 'url_credentials', 'secret_query_param']);
    const out = C.scrub(trafficRecord({ uri: '/', response: { body: text } }), ctx).record.response!.body as string;
    assert.match(out, /k=sk_live_\w{24} gh=ghp_\w{36} aws=AKIA[A-Z0-9]{16}/);
    assert.ok(out.includes('-----BEGIN PRIVATE KEY-----') && !out.includes('MIIBVQ'));
    const json = C.scrub(trafficRecord({ uri: '/', request: { body: { password: 'hunter22', client_secret: 'abc', webhook_secret: 'whsec', tokens_used: 5, token_type: 'bearer' } } }), ctx);
    assert.deepEqual(json.findings.map((f) => f.path).sort(), ['request.body.client_secret', 'request.body.password', 'request.body.webhook_secret']);
  });
});
