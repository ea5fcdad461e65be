import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { scrubWithAll, UNSCRUBBABLE, type ScrubContext, type Scrubber, type ScrubbedRecord } from '../../kernel/contracts/scrubber.js';
import type { RecordedBody, RecordedHeaders } from '../../kernel/domain/index.js';
import { createKernel } from '../../kernel/kernel.js';
import { decodeWindows1252, encodeWindows1252, inflateLimit, MAX_INFLATED_BYTES, readableBody } from '../../kernel/scrub/body.js';
import { newPseudonymKey } from '../../kernel/scrub/pseudonym.js';
import { BUILTIN_PLUGIN_MODULES } from '../../plugins/index.js';
import { trafficRecord } from '../helpers/traffic.js';

// The walk as a transition runs it: every built-in scrubber, booted, in one walk of each record.
const kernel = await createKernel({ builtins: BUILTIN_PLUGIN_MODULES, workers: 1 });
const scrubbers = kernel.plugins.ofKind('scrubber').map((p) => p.instance as Scrubber);
const ctx = (rules: Partial<ScrubContext['rules']> = {}): ScrubContext => ({ tenantKey: KEY, rules: { disable: [], keys: {}, patterns: {}, ...rules } });
const KEY = newPseudonymKey();
const scrub = (record: ScrubbedRecord, rules: Partial<ScrubContext['rules']> = {}) => scrubWithAll(scrubbers, [record], ctx(rules))[0]!;
const rulesAt = (r: ScrubbedRecord) => (r.scrub_findings ?? []).map((f) => `${f.path} ${f.rule}`);
const b64 = (bytes: Uint8Array): RecordedBody => ({ b64: Buffer.from(bytes).toString('base64'), size_bytes: bytes.length });
const withBody = (headers: RecordedHeaders, body: RecordedBody) => trafficRecord({ uri: '/x', response: { headers, body } });

const EMAIL = 'jane.doe@example.com';
const CARD = '4111111111111111';
const TOKEN = 'sk_live_abcdefghij0123456789';

describe('scrub walk: names', () => {
  after(() => kernel.close());

  it('scrubs JSON keys, renaming them in place, and names findings by the new name only', () => {
    const body = { members: { [EMAIL]: { role: 'admin', email: EMAIL }, [CARD]: 1, plain: 2 }, [TOKEN]: true, last: 0 };
    const out = scrub(trafficRecord({ uri: '/x', response: { body } }));
    const text = String(out.response!.body);
    for (const planted of [EMAIL, CARD, TOKEN]) assert.ok(!text.includes(planted) && !JSON.stringify(out.scrub_findings).includes(planted), planted);
    const parsed = JSON.parse(text) as { members: Record<string, unknown> } & Record<string, unknown>;
    const [emailKey, cardKey, plain] = Object.keys(parsed.members);
    assert.match(emailKey!, /^[a-z]{4}\.[a-z]{3}@[a-z]{7}\.com$/);
    assert.match(cardKey!, /^41\d{14}$/);
    assert.equal(plain, 'plain');
    assert.deepEqual(Object.keys(parsed).map((k) => k.slice(0, 8)), ['members', 'sk_live_', 'last'], 'keys keep their order');
    assert.deepEqual(parsed.members[emailKey!], { role: 'admin', email: (parsed.members[emailKey!] as { email: string }).email });
    assert.equal((parsed.members[emailKey!] as { email: string }).email, emailKey, 'one value, one pseudonym, as key or value');
    assert.ok(rulesAt(out).includes(`response.body.members.${emailKey} email`));
    assert.ok(rulesAt(out).includes(`response.body.members.${emailKey}.email email`));
    assert.ok(rulesAt(out).includes(`response.body.members.${cardKey} card_number`));
  });

  it('gives a renamed key that collides with a name already there the first free ~n suffix, the same way every time', () => {
    const first = scrub(trafficRecord({ uri: '/x', response: { body: { [EMAIL]: 1 } } }));
    const pseudonym = Object.keys(JSON.parse(String(first.response!.body)) as object)[0]!;
    // A pseudonym is PII-shaped too: only a kept key (never looked at) can already hold its name.
    const rules = { keys: { [pseudonym]: 'keep' as const, [`${pseudonym}~2`]: 'keep' as const } };
    const body = { [EMAIL]: 1, [pseudonym]: 2, [`${pseudonym}~2`]: 3 };
    const a = JSON.parse(String(scrub(trafficRecord({ uri: '/x', response: { body } }), rules).response!.body)) as Record<string, number>;
    assert.deepEqual(a, { [`${pseudonym}~3`]: 1, [pseudonym]: 2, [`${pseudonym}~2`]: 3 });
    assert.deepEqual(Object.keys(a), [`${pseudonym}~3`, pseudonym, `${pseudonym}~2`]);
    assert.deepEqual(JSON.parse(String(scrub(trafficRecord({ uri: '/x', response: { body } }), rules).response!.body)), a);
  });

  it('scrubs query and form parameter names, with or without a value, and leaves kept keys alone', () => {
    const out = scrub(
      trafficRecord({
        uri: `/u?${EMAIL}=1&flag&${encodeURIComponent(EMAIL)}&limit=10`,
        request: { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `${encodeURIComponent(EMAIL)}=yes&${TOKEN}=1&keepme=${EMAIL}` },
      }),
      { keys: { keepme: 'keep' } },
    );
    const uri = decodeURIComponent(out.request.uri);
    const form = String(out.request.body);
    assert.ok(!uri.includes(EMAIL) && !decodeURIComponent(form).replace(`keepme=${EMAIL}`, '').includes(EMAIL) && !form.includes(TOKEN), `${uri} ${form}`);
    assert.match(uri, /^\/u\?[a-z]{4}\.[a-z]{3}@[a-z]{7}\.com=1&flag&[a-z.]+@[a-z]+\.com&limit=10$/);
    assert.ok(form.endsWith(`&keepme=${EMAIL}`), 'a kept key is not looked at');
    const paths = rulesAt(out);
    const renamed = new URLSearchParams(out.request.uri.split('?')[1]).keys().next().value!;
    assert.ok(paths.includes(`request.query.${renamed} email`), 'the finding names the parameter as it now is (promotion leaves it out of the query matcher)');
    assert.ok(paths.some((p) => p.startsWith('request.body.sk_live_') && p.endsWith(' token_format')), 'a form field is named under the body');
  });

  it('leaves names that are not PII, and their records, exactly as they were', () => {
    const record = trafficRecord({ uri: '/v1/items?limit=10&starting_after=it_123', response: { body: '{"data":[{"id":"it_1","name":"Widget","price":12}],"has_more":false}' } });
    const out = scrub(record);
    assert.equal(out.request.uri, record.request.uri);
    assert.equal(out.response!.body, record.response!.body);
    assert.equal(out.scrub_findings, undefined);
  });
});

describe('scrub walk: bodies it cannot read as they are', () => {
  it('bounds decompression: a gzip bomb is kept as it was and flagged, quickly and in bounded memory', () => {
    const bomb = gzipSync(Buffer.alloc(200 * 1024 * 1024, 'a'));
    assert.ok(bomb.length < 400 * 1024);
    const headers = { 'content-type': 'text/plain', 'content-encoding': 'gzip' };
    const record = withBody(headers, b64(bomb));
    const rss = process.memoryUsage().rss;
    const started = performance.now();
    const out = scrub(record);
    assert.ok(performance.now() - started < 5000);
    assert.ok(process.memoryUsage().rss - rss < 200 * 1024 * 1024, 'never inflated past its bound');
    assert.deepEqual(out.response!.body, record.response!.body, 'the bytes stay');
    assert.equal(out.response!.headers['content-encoding'], 'gzip');
    assert.deepEqual(rulesAt(out), [`response.body ${UNSCRUBBABLE}`]);
    assert.ok(inflateLimit(bomb.length) <= MAX_INFLATED_BYTES);
  });

  it('inflates gzip, deflate, br and stacked codings within the bound, and flags corrupt or unknown ones', () => {
    const json = Buffer.from(JSON.stringify({ email: EMAIL }));
    for (const [coding, bytes] of [['gzip', gzipSync(json)], ['deflate', deflateSync(json)], ['br', brotliCompressSync(json)], ['deflate, gzip', gzipSync(deflateSync(json))]] as const) {
      const out = scrub(withBody({ 'content-type': 'application/json', 'content-encoding': coding, 'content-length': String(bytes.length) }, b64(bytes)));
      assert.equal(typeof out.response!.body, 'string', coding);
      assert.ok(!String(out.response!.body).includes(EMAIL), coding);
      assert.deepEqual(Object.keys(out.response!.headers), ['content-type'], `${coding}: kept decompressed`);
    }
    for (const [coding, bytes] of [['gzip', Buffer.from('not gzip at all')], ['zstd', Buffer.from([0x28, 0xb5, 0x2f, 0xfd])]] as const) {
      const record = withBody({ 'content-type': 'application/json', 'content-encoding': coding }, b64(bytes));
      const out = scrub(record);
      assert.deepEqual(out.response, record.response, coding);
      assert.deepEqual(rulesAt(out), [`response.body ${UNSCRUBBABLE}`], coding);
    }
  });

  it('reads textual bodies that are not UTF-8 as windows-1252, scrubs them, and writes them back the same way', () => {
    const text = `Caf\xe9 \x80 5 \x93${EMAIL}\x94 card ${CARD} r\xe9sum\xe9`;
    const bytes = Buffer.from(text, 'latin1');
    for (const type of ['text/plain; charset=windows-1252', 'application/json', 'application/xml', 'application/javascript', 'text/csv']) {
      const out = scrub(withBody({ 'content-type': type }, b64(bytes)));
      const body = out.response!.body as { b64: string; size_bytes: number };
      assert.equal(typeof body, 'object', `${type}: still bytes that are not UTF-8`);
      const after = Buffer.from(body.b64, 'base64');
      assert.equal(body.size_bytes, after.length);
      assert.equal(after.length, bytes.length, 'pseudonyms keep lengths');
      const read = after.toString('latin1');
      assert.ok(!read.includes(EMAIL) && !read.includes(CARD), type);
      assert.ok(read.startsWith('Caf\xe9 \x80 5 \x93') && read.endsWith(' r\xe9sum\xe9'), `${type}: every other byte stays`);
      assert.deepEqual(rulesAt(out).sort(), ['response.body card_number', 'response.body email'], type);
    }
    const form = Buffer.from(`name=Jos\xe9&email=${encodeURIComponent(EMAIL)}`, 'latin1');
    const out = scrub(withBody({ 'content-type': 'application/x-www-form-urlencoded' }, b64(form)));
    assert.ok(!Buffer.from((out.response!.body as { b64: string }).b64, 'base64').toString('latin1').includes('jane.doe'));
  });

  it('flags bodies of types that are not text and leaves their bytes alone; a textual body with nothing to scrub stays as it was', () => {
    const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0xff]), Buffer.from(EMAIL)]);
    for (const headers of [{ 'content-type': 'image/png' }, { 'content-type': 'application/octet-stream' }, { 'content-type': 'application/x-protobuf' }, {}] as RecordedHeaders[]) {
      const record = withBody(headers, b64(png));
      const out = scrub(record);
      assert.deepEqual(out.response!.body, record.response!.body);
      assert.deepEqual(rulesAt(out), [`response.body ${UNSCRUBBABLE}`]);
    }
    const plain = withBody({ 'content-type': 'text/plain' }, b64(Buffer.from('nothing \xff here', 'latin1')));
    const out = scrub(plain);
    assert.equal(out.response!.body, plain.response!.body, 'the very same body');
    assert.equal(out.scrub_findings, undefined);
  });

  it('scrubs JSON nested past MAX_NESTING as text, flagged, without throwing; and a kept deep subtree too', () => {
    const deep = `${'['.repeat(20_000)}"${EMAIL}"${']'.repeat(20_000)}`;
    const out = scrub(trafficRecord({ uri: '/x', request: { headers: { 'content-type': 'application/json' }, body: deep }, response: { body: `{"a":${deep}}` } }));
    for (const side of [out.request, out.response!]) {
      assert.ok(!String(side.body).includes(EMAIL));
      assert.equal(String(side.body).length, deep.length + (side === out.request ? 0 : 6));
    }
    assert.deepEqual(rulesAt(out), [`request.body email`, `request.body ${UNSCRUBBABLE}`, `response.body email`, `response.body ${UNSCRUBBABLE}`]);
    const kept = scrub(trafficRecord({ uri: '/x', response: { body: `{"keepme":${deep},"email":"${EMAIL}"}` } }), { keys: { keepme: 'keep' } });
    // As text, a kept key cannot be told apart: everything is scrubbed by shape.
    assert.deepEqual(rulesAt(kept), [`response.body email`, `response.body email`, `response.body ${UNSCRUBBABLE}`]);
    const shallow = `${'['.repeat(99)}"${EMAIL}"${']'.repeat(99)}`;
    const within = scrub(trafficRecord({ uri: '/x', response: { body: shallow } }));
    assert.deepEqual(rulesAt(within), [`response.body${'[0]'.repeat(99)} email`], 'MAX_NESTING levels are walked as JSON');
  });

  it('adds one unscrubbable finding per body however many walks a chain makes', () => {
    const record = withBody({ 'content-type': 'image/png' }, b64(Buffer.from([0xff, 0xfe])));
    const once = scrubWithAll(scrubbers, [record], ctx());
    const twice = scrubWithAll(scrubbers, once, ctx());
    assert.deepEqual(rulesAt(twice[0]!), [`response.body ${UNSCRUBBABLE}`]);
  });
});

describe('scrub walk: body encodings', () => {
  it('windows-1252 (as WHATWG defines it) round-trips every byte', () => {
    const all = Uint8Array.from({ length: 256 }, (_, i) => i);
    const text = decodeWindows1252(all);
    assert.equal(text.length, 256);
    assert.deepEqual([text[0x41], text[0x80], text[0x81], text[0x8a], text[0x93], text[0x9f], text[0xe9]], ['A', '€', '\x81', 'Š', '“', 'Ÿ', 'é']);
    assert.deepEqual([...encodeWindows1252(text)], [...all]);
    assert.deepEqual([...encodeWindows1252('a€☃')], [0x61, 0x80, 0x3f], 'what it cannot spell becomes ?');
  });

  it('reads a UTF-8 body given as base64 as text, and keeps it as it was when nothing changes', () => {
    const body = b64(Buffer.from('plain text'));
    const readable = readableBody({ 'content-type': 'text/plain' }, body)!;
    assert.equal(readable.text, 'plain text');
    assert.equal(readable.encode('plain text'), body);
    assert.equal(readable.encode('other text'), 'other text');
    assert.equal(readableBody({ 'content-type': 'image/png' }, b64(Buffer.from([0xff]))), null);
  });
});
