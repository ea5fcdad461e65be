import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { BodyStream } from '../../adapters/http/body.js';
import { defineRoute } from '../../adapters/http/route.js';
import { startHarness, type Harness } from '../helpers/harness.js';

const fixture = (p: string) => readFileSync(new URL(`../../../test/fixtures/${p}`, import.meta.url));
const JSON_TYPE = { 'Content-Type': 'application/json' };
const YAML_TYPE = { 'Content-Type': 'application/yaml' };

async function service(h: Harness, name: string, upstream: string, prefix: string): Promise<string> {
  const res = await h.call('POST', '/services', { body: { name, upstream_url: upstream, routing_type: 'path_prefix', routing_value: prefix } });
  assert.equal(res.status, 201, res.text);
  return String(res.body.id);
}

async function seed(h: Harness, format: string, doc: Buffer | string, headers: Record<string, string>, serviceId?: string, query: Record<string, string> = {}) {
  const q = new URLSearchParams({ ...(serviceId && { service_id: serviceId }), ...query }).toString();
  return h.call('POST', `/v1/seed/${format}${q ? `?${q}` : ''}`, { rawBody: doc, headers });
}

/** A request through the agent (MOCK mode by then). */
async function agent(h: Harness, path: string, init: RequestInit = {}) {
  const res = await fetch(h.agentUrl + path, init);
  return { status: res.status, headers: res.headers, text: await res.text() };
}

async function waitForLibrary(h: Harness, entries: number): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const health = (await (await fetch(`${h.agentUrl}/__understudy/health`)).json()) as { library_entries: number };
    if (health.library_entries === entries) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(`the agent never loaded ${entries} entries`);
}

const total = async (h: Harness, q = '') => Number((await h.call('GET', `/mocks?limit=1${q}`)).body.total);

describe('mock library: seed imports, MOCK answers, list, export, delete', () => {
  let h: Harness;
  let shop: string;
  let pets: string;
  let board: string;
  let unscrubbed: string;
  before(async () => {
    // A streamed-body route with a small limit, to see 413 both ways without sending 100 MiB.
    const sink = defineRoute({
      method: 'POST',
      path: '/test/stream',
      summary: 'test',
      tag: 'test',
      streamBody: { limit: 1024 },
      async handler({ body }) {
        let n = 0;
        for await (const c of (body as BodyStream).chunks) n += c.byteLength;
        return { body: { bytes: n } };
      },
    });
    h = await startHarness({ extraRoutes: [sink] });
    shop = await service(h, 'shop', 'http://127.0.0.1:4173', '/shop');
    pets = await service(h, 'petstore', 'https://petstore.swagger.io/v2', '/pets-api');
    board = await service(h, 'tictactoe', 'https://tictactoe.example', '/ttt');
  });
  after(() => h.close());

  it('imports a real browser HAR: one entry per exchange of a known host, the rest reported', async () => {
    const res = await seed(h, 'har', fixture('har/shop.har'), JSON_TYPE);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.created, 6);
    assert.deepEqual(res.body.skipped, [
      { where: 'log.entries[7]', why: "repeats log.entries[2], whose body was saved; this one's was not" },
      { where: 'log.entries[1]', why: 'host 127.0.0.1:4174 matches no service; register one whose upstream_url is on that host, then import again' },
    ]);
    assert.deepEqual(res.body.warnings, ['1 responses have no saved body (the browser did not keep it); their mocks answer an empty body']);
    const again = await seed(h, 'har', fixture('har/shop.har'), JSON_TYPE);
    assert.equal(again.body.created, 0);
    assert.equal(again.body.updated, 6, 're-importing the same document updates, never duplicates');
    assert.equal(await total(h, `&service_id=${shop}`), 6);
  });

  it('imports OpenAPI 3.0 and 3.1 (YAML) and Postman v2.0 and v2.1', async () => {
    const petstore = await seed(h, 'openapi', fixture('openapi/petstore-expanded-3.0.yaml'), YAML_TYPE, pets);
    assert.equal(petstore.status, 200, petstore.text);
    assert.equal(petstore.body.created, 4);
    assert.equal(petstore.body.skipped_total, 4, 'default responses beside explicit ones are reported');
    const ttt = await seed(h, 'openapi', fixture('openapi/tictactoe-3.1.yaml'), YAML_TYPE, board);
    assert.equal(ttt.body.created, 5, ttt.text);
    for (const version of ['v2.0', 'v2.1']) {
      const id = await service(h, `postman-${version}`, 'https://petstore.swagger.io/v2', `/postman-${version.replace('.', '')}`);
      // v2.0 is stored as captured (scrub=false), to see the default export leave it out.
      const res = await seed(h, 'postman', fixture(`postman/petstore-expanded-${version}.json`), JSON_TYPE, id, version === 'v2.0' ? { scrub: 'false' } : {});
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.scrubbed, version !== 'v2.0');
      if (version === 'v2.0') unscrubbed = id;
      assert.equal(res.body.created, 4, `${version}: ${res.text}`);
      assert.equal(res.body.skipped_total, 4, 'examples without a status code are reported');
    }
    const list = await h.call('GET', `/mocks?service_id=${pets}&method=get`);
    assert.equal(list.body.total, 2);
    assert.deepEqual((list.body.data as { uri_template: string }[]).map((e) => e.uri_template).sort(), ['/pets', '/pets/{id}']);
    assert.equal((list.body.data as { origin: string }[])[0]!.origin.startsWith('paths['), true);
  });

  it('serves what was imported in MOCK mode, over real sockets', async () => {
    assert.equal((await h.call('POST', '/v1/mode', { body: { mode: 'mock' } })).status, 200);
    await waitForLibrary(h, await total(h));
    const products = await agent(h, '/shop/api/products');
    assert.equal(products.status, 200);
    assert.equal(products.headers.get('content-encoding'), null, 'the HAR keeps bodies decoded, so the mock does not claim gzip');
    assert.deepEqual(JSON.parse(products.text), [
      { id: 1, name: 'Desk lamp', price: 3900 },
      { id: 2, name: 'Notebook', price: 450 },
      { id: 3, name: 'Fountain pen', price: 2400 },
    ]);
    assert.equal((await agent(h, '/shop/api/products/999')).status, 404);
    assert.equal((await agent(h, '/shop/api/search?q=pen&limit=5')).status, 200);
    const cart = await agent(h, '/shop/api/cart', { method: 'POST', headers: JSON_TYPE, body: '{"quantity":1,"product_id":2}' });
    assert.equal(cart.status, 201, 'a JSON body matcher ignores key order');
    const other = await agent(h, '/shop/api/cart', { method: 'POST', headers: JSON_TYPE, body: '{"product_id":3}' });
    assert.equal(other.status, 404);
    assert.equal(JSON.parse(other.text).error_code, 'no_mock_match');

    const pet = await agent(h, '/pets-api/pets/42');
    assert.equal(pet.status, 200, 'a template entry answers any id');
    assert.deepEqual(JSON.parse(pet.text), { name: 'string', tag: 'string', id: 0 });
    assert.equal((await agent(h, '/pets-api/pets/7', { method: 'DELETE' })).status, 204);
    assert.equal((await agent(h, '/postman-v21/pets/5')).status, 200);
    assert.equal((await agent(h, '/postman-v20/pets')).status, 200);

    const square = await agent(h, '/ttt/board/2/3');
    assert.equal(square.status, 200, 'the lowest 2xx answers by default');
    assert.equal(square.text, '"."');
    const asked = await agent(h, '/ttt/board/2/3', { headers: { Prefer: 'code=400' } });
    assert.equal(asked.status, 400, 'Prefer: code=400 picks the 400 entry');
    assert.equal(asked.text, 'Illegal coordinates');
    assert.equal(asked.headers.get('content-type'), 'text/html');
    const none = await agent(h, '/ttt/board/2/3', { headers: { Prefer: 'code=500' } });
    assert.equal(none.status, 404);
    assert.match(none.text, /Prefer asked for 500/);
  });

  it('refuses bad documents with 422 naming the location, and writes nothing', async () => {
    const before = await total(h);
    const har = JSON.parse(fixture('har/shop.har').toString()) as { log: { entries: { response: { status: unknown } }[] } };
    har.log.entries[5]!.response.status = 'OK';
    const cases: [string, string | Buffer, Record<string, string>, RegExp, string?][] = [
      ['har', JSON.stringify(har), JSON_TYPE, /^log\.entries\[5\]\.response\.status: /],
      ['har', fixture('har/shop.har').subarray(0, 9000), JSON_TYPE, /^log\.entries\[\d+\]: the document ends early/],
      ['openapi', 'openapi: 3.0.0\npaths:\n  /a:\n    get:\n      responses:\n        "200":\n          $ref: "#/components/responses/A"\ncomponents:\n  responses:\n    A:\n      $ref: "#/components/responses/A"\n', YAML_TYPE, /^paths\["\/a"\]\.get\.responses\["200"\]\.\$ref: .*loops back/, pets],
      ['postman', '{"info":{"schema":"https://schema.getpostman.com/json/collection/v1.0.0/collection.json"},"item":[]}', JSON_TYPE, /^info\.schema: .*v2\.1/, pets],
    ];
    for (const [format, doc, headers, detail, serviceId] of cases) {
      const res = await seed(h, format, doc, headers, serviceId);
      assert.equal(res.status, 422, res.text);
      assert.equal(res.body.error_code, 'validation_error');
      assert.match(String(res.body.detail), detail);
    }
    assert.equal(await total(h), before, 'a failed import changes nothing, even after earlier entries of it were written');
    assert.equal((await seed(h, 'openapi', '{}', JSON_TYPE)).status, 422, 'service_id is required for openapi');
    assert.equal((await seed(h, 'openapi', '{}', JSON_TYPE, 'svc_nope')).status, 404);
    assert.equal((await seed(h, 'har', 'x', { 'Content-Type': 'text/plain' })).status, 415);
    assert.equal((await seed(h, 'nope', '{}', JSON_TYPE)).status, 404);
    assert.equal((await h.call('POST', '/v1/seed/har', { headers: JSON_TYPE })).status, 422, 'no body');
  });

  it('streamed bodies: 413 past the limit by Content-Length or while reading a chunked body', async () => {
    assert.deepEqual((await h.call('POST', '/test/stream', { rawBody: Buffer.alloc(1000), headers: JSON_TYPE })).body, { bytes: 1000 });
    const declared = await h.call('POST', '/test/stream', { rawBody: Buffer.alloc(2000), headers: JSON_TYPE });
    assert.equal(declared.status, 413);
    assert.equal(declared.body.error_code, 'payload_too_large');
    const chunks = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(new Uint8Array(600));
        if ((this as { n?: number }).n === undefined) (this as { n?: number }).n = 0;
        if (++(this as { n: number }).n === 3) controller.close();
      },
    });
    const res = await fetch(`${h.url}/test/stream`, { method: 'POST', body: chunks, headers: { ...JSON_TYPE, 'X-Service-Api-Key': h.apiKey }, duplex: 'half' } as RequestInit);
    assert.equal(res.status, 413);
  });

  it('a slow upload holds no database transaction: other calls go on while it arrives', async () => {
    const doc = fixture('har/shop.har');
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    // Half the document now, the rest once the other calls have been answered.
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(doc.subarray(0, doc.length >> 1));
        await held;
        controller.enqueue(doc.subarray(doc.length >> 1));
        controller.close();
      },
    });
    const upload = fetch(`${h.url}/v1/seed/har`, { method: 'POST', headers: { ...JSON_TYPE, 'X-Service-Api-Key': h.apiKey }, body, duplex: 'half' } as RequestInit);
    await new Promise((r) => setTimeout(r, 100));
    const started = performance.now();
    const other = await service(h, 'while-uploading', 'http://127.0.0.1:4199', '/while-uploading');
    assert.ok(performance.now() - started < 2000, 'a write went through while the upload was open');
    release();
    const res = await upload;
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal(((await res.json()) as { format: string }).format, 'har');
    assert.equal((await h.call('DELETE', `/services/${other}`)).status, 204);
  });

  it('exports native, HAR and WireMock; unscrubbed export is gated by require_scrubbing', async () => {
    const native = await h.call('GET', '/mocks/export');
    assert.equal(native.status, 200);
    const scrubbed = native.body.entries as { service_id: string; scrubbed: boolean }[];
    assert.equal(scrubbed.length, (await total(h)) - (await total(h, `&service_id=${unscrubbed}`)), 'by default only scrubbed entries leave');
    assert.ok(scrubbed.every((e) => e.scrubbed && e.service_id !== unscrubbed));
    const all = await h.call('GET', '/mocks/export?scrubbed_only=false&format=har');
    const entries = (all.body.log as { entries: { request: { url: string } }[] }).entries;
    assert.equal(entries.length, await total(h));
    assert.ok(entries.some((e) => e.request.url === 'http://127.0.0.1:4173/api/search?q=pen&limit=5'));
    const wm = await h.call('GET', `/mocks/export?scrubbed_only=false&format=wiremock&service_id=${board}`);
    const mappings = wm.body.mappings as { request: { urlPathTemplate?: string }; priority: number; response: { status: number } }[];
    assert.equal(mappings.length, 5);
    const square = mappings.filter((m) => m.request.urlPathTemplate === '/ttt/board/{row}/{column}');
    assert.ok(square.find((m) => m.response.status === 200)!.priority < square.find((m) => m.response.status === 400)!.priority);

    assert.equal((await h.call('PUT', '/config/require_scrubbing', { body: { value: true } })).status, 200);
    const refused = await h.call('GET', '/mocks/export?scrubbed_only=false');
    assert.equal(refused.status, 409);
    assert.equal(refused.body.error_code, 'scrubbing_required');
    assert.equal((await h.call('GET', '/mocks/export')).status, 200);
    assert.equal((await h.call('PUT', '/config/require_scrubbing', { body: { value: false } })).status, 200);
  });

  it('deletes one entry, one service, everything; each write leaves an activity record', async () => {
    const first = (await h.call('GET', `/mocks?service_id=${shop}&limit=1`)).body.data as { id: string }[];
    assert.equal((await h.call('DELETE', `/mocks/${first[0]!.id}`)).status, 204);
    assert.equal((await h.call('DELETE', `/mocks/${first[0]!.id}`)).status, 404);
    const one = await h.call('DELETE', `/mocks?service_id=${board}`);
    assert.equal(one.body.deleted, 5);
    const rest = await h.call('DELETE', '/mocks');
    assert.ok(Number(rest.body.deleted) > 0);
    assert.equal(await total(h), 0);
    const activity = (await h.call('GET', '/v1/activity?limit=100')).body.data as { action: string; detail: Record<string, unknown> }[];
    const seeds = activity.filter((a) => a.action === 'post /v1/seed/har');
    assert.ok(seeds.some((a) => a.detail.created === 6));
    assert.ok(activity.some((a) => a.action === 'delete /mocks'));
  });
});

describe('an external importer plugin through SERVICE_PLUGINS and the API', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ env: { SERVICE_PLUGINS: new URL('../fixtures/plugins/wiremock-importer.js', import.meta.url).pathname } });
  });
  after(() => h.close());

  it('round-trips a library: HAR in, WireMock out, back in through the plugin at POST /v1/seed/wiremock', async () => {
    const shop = await service(h, 'shop', 'http://127.0.0.1:4173', '/shop');
    assert.equal((await seed(h, 'har', fixture('har/shop.har'), JSON_TYPE)).body.created, 6);
    const exported = await h.call('GET', `/mocks/export?scrubbed_only=false&format=wiremock&service_id=${shop}`);
    const copy = await service(h, 'copy', 'http://copy.test', '/copy');
    const res = await seed(h, 'wiremock', exported.text, JSON_TYPE, copy);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.format, 'wiremock');
    assert.equal(res.body.created, 6);
    assert.equal((await seed(h, 'wiremock', 'x', { 'Content-Type': 'text/plain' }, copy)).status, 415, "the plugin's media types apply");
    await h.call('POST', '/v1/mode', { body: { mode: 'mock' } });
    await waitForLibrary(h, 12);
    const cart = await agent(h, '/copy/shop/api/cart', { method: 'POST', headers: JSON_TYPE, body: '{"product_id":2,"quantity":1}' });
    assert.equal(cart.status, 201);
    assert.equal(JSON.parse(cart.text).cart_id, 'cart_7');
    const pixelFree = await h.call('GET', `/mocks?service_id=${copy}&limit=50`);
    assert.ok((pixelFree.body.data as { source: string }[]).every((e) => e.source === 'wiremock'));
  });
});
