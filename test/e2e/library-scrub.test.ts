import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { startHarness, type Harness } from '../helpers/harness.js';

const JSON_TYPE = { 'Content-Type': 'application/json' };
const EMAIL = 'jane.doe@example.com';
const CARD = '4242 4242 4242 4242';
const SESSION = 'sess_9f8e7d6c5b4a39281706';
const API_KEY = 'sk_live_4eC39HqLyjWDarjtT1zdp7dc';
const PLANTED = [EMAIL, CARD, SESSION, API_KEY];

type HarEntry = {
  request: { url: string; postData?: { mimeType: string; text: string } };
  response: { headers: { name: string; value: string }[]; content: { text?: string } };
};

/** The real browser HAR of the shop, with an e-mail, a card, a session cookie and an API key planted in it. */
function plantedHar(): string {
  const har = JSON.parse(readFileSync(new URL('../../../test/fixtures/har/shop.har', import.meta.url), 'utf8')) as { log: { entries: HarEntry[] } };
  const byUrl = (suffix: string, method = 'GET') => har.log.entries.find((e) => e.request.url.endsWith(suffix) && (e.request as { method?: string }).method === method)!;
  const product = byUrl('/api/products/2');
  product.response.content.text = JSON.stringify({ ...(JSON.parse(product.response.content.text!) as object), owner: { email: EMAIL, card: CARD } });
  product.response.headers.push({ name: 'Set-Cookie', value: `session=${SESSION}; Path=/; HttpOnly` });
  byUrl('/api/search?q=pen&limit=5').request.url += `&api_key=${API_KEY}`;
  byUrl('/api/cart', 'POST').request.postData = { mimeType: 'application/json', text: JSON.stringify({ quantity: 1, product_id: 2, email: EMAIL }) };
  return JSON.stringify(har);
}

describe('captured imports are scrubbed as recorded traffic is', () => {
  let h: Harness;
  let shop: string;
  const har = plantedHar();
  before(async () => {
    h = await startHarness();
    const res = await h.call('POST', '/services', { body: { name: 'shop', upstream_url: 'http://127.0.0.1:4173', routing_type: 'path_prefix', routing_value: '/shop' } });
    assert.equal(res.status, 201, res.text);
    shop = String(res.body.id);
  });
  after(() => h.close());

  it('scrubs a HAR by default: nothing planted is stored or exported, pseudonyms match the dry run, and the agent still answers the real requests', async () => {
    const res = await h.call('POST', '/v1/seed/har', { rawBody: har, headers: JSON_TYPE });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.scrubbed, true);
    assert.equal(res.body.created, 6);
    const findings = res.body.findings as Record<string, number>;
    for (const rule of ['email', 'card_number', 'cookie', 'secret_query_param']) assert.ok(findings[rule]! > 0, `${rule} in ${JSON.stringify(findings)}`);
    assert.doesNotMatch(res.text, /jane|4242|sess_|sk_live/, 'the report names rules, never values');

    const list = await h.call('GET', '/mocks?limit=500');
    const entries = list.body.data as { path: string; scrubbed: boolean; query: unknown; body_matcher: unknown; response: { body: string } }[];
    assert.equal(entries.length, 6);
    assert.ok(entries.every((e) => e.scrubbed));
    const exported = await h.call('GET', '/mocks/export');
    assert.equal((exported.body.entries as unknown[]).length, 6, 'scrubbed entries leave by default');
    for (const text of [list.text, exported.text]) for (const value of PLANTED) assert.ok(!text.includes(value), `${value} was stored`);

    // One value, one pseudonym: the import's is the dry run's (and a transition's).
    const dry = await h.call('POST', '/v1/scrub/test', { body: { body: { email: EMAIL } } });
    const pseudonym = (dry.body.body as { email: string }).email;
    assert.notEqual(pseudonym, EMAIL);
    const product = entries.find((e) => e.path === '/api/products/2')!;
    assert.equal((JSON.parse(product.response.body) as { owner: { email: string } }).owner.email, pseudonym);
    // The scrubbed query parameter and the request body that held an e-mail left the matchers.
    assert.deepEqual(entries.find((e) => e.path === '/api/search')!.query, { limit: ['5'], q: ['pen'] });
    assert.equal(entries.find((e) => e.path === '/api/cart')!.body_matcher, null);

    assert.equal((await h.call('POST', '/v1/mode', { body: { mode: 'mock' } })).status, 200);
    for (let i = 0; i < 100; i++) {
      const health = (await (await fetch(`${h.agentUrl}/__understudy/health`)).json()) as { library_entries: number };
      if (health.library_entries === 6) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const answer = await fetch(`${h.agentUrl}/shop/api/products/2`);
    assert.equal(answer.status, 200);
    const cookie = answer.headers.get('set-cookie') ?? '';
    assert.match(cookie, /^session=[^;]+; Path=\/; HttpOnly$/, 'the cookie keeps its name and attributes');
    assert.ok(!cookie.includes(SESSION));
    assert.ok(!(await answer.text()).includes(EMAIL));
    const search = await fetch(`${h.agentUrl}/shop/api/search?q=pen&limit=5&api_key=${API_KEY}`);
    assert.equal(search.status, 200, 'the real client, sending the real key, is answered');
    const cart = await fetch(`${h.agentUrl}/shop/api/cart`, { method: 'POST', headers: JSON_TYPE, body: JSON.stringify({ quantity: 1, product_id: 2, email: EMAIL }) });
    assert.equal(cart.status, 201);
    assert.equal((await h.call('POST', '/v1/mode', { body: { mode: 'learn' } })).status, 200);
  });

  it('stores captured entries as they are with scrub=false, marked unscrubbed and left out of the default export', async () => {
    assert.equal((await h.call('DELETE', '/mocks')).status, 200);
    const res = await h.call('POST', '/v1/seed/har?scrub=false', { rawBody: har, headers: JSON_TYPE });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.scrubbed, false);
    assert.deepEqual(res.body.findings, {});
    const list = await h.call('GET', '/mocks?limit=500');
    assert.ok((list.body.data as { scrubbed: boolean }[]).every((e) => !e.scrubbed));
    assert.ok(list.text.includes(EMAIL), 'kept as captured');
    const exported = await h.call('GET', '/mocks/export');
    assert.deepEqual(exported.body.entries, []);
    assert.equal((await h.call('POST', '/v1/seed/har?scrub=maybe', { rawBody: har, headers: JSON_TYPE })).status, 422);
  });

  it('scrubs each entry of a HAR that spans several services with its own service\'s rules', async () => {
    assert.equal((await h.call('DELETE', '/mocks')).status, 200);
    const pixels = await h.call('POST', '/services', { body: { name: 'pixels', upstream_url: 'http://127.0.0.1:4174', routing_type: 'path_prefix', routing_value: '/px' } });
    assert.equal(pixels.status, 201, pixels.text);
    const rules = await h.call('PUT', '/config/scrub_rules', { body: { value: { [shop]: { keys: { name: 'redact' } }, [String(pixels.body.id)]: { keys: { 'cache-control': 'redact' } } } } });
    assert.equal(rules.status, 200, rules.text);
    const res = await h.call('POST', '/v1/seed/har', { rawBody: har, headers: JSON_TYPE });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.created, 7, 'the pixel is imported too, now that its host has a service');
    const entries = (await h.call('GET', '/mocks?limit=500')).body.data as { service_id: string; path: string; response: { headers: Record<string, string>; body: string } }[];
    const product = entries.find((e) => e.path === '/api/products/2')!;
    assert.equal((JSON.parse(product.response.body) as { name: string }).name, '[redacted]', "the shop's rule");
    assert.notEqual(product.response.headers['cache-control'], '[redacted]', "not the pixel service's");
    const pixel = entries.find((e) => e.service_id === pixels.body.id)!;
    assert.equal(pixel.response.headers['cache-control'], '[redacted]', "the pixel service's rule");
  });
});
