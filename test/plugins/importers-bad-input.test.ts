import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { isAppError } from '../../kernel/errors.js';
import type { Importer } from '../../kernel/public.js';
import { bootImporters, fixture, readAll } from '../helpers/importers.js';

const deepJson = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);
// Flow style: block style needs an indent per level, 100 MB for 10,000 levels (refused as too large).
const deepYaml = (levels: number) => `openapi: 3.0.0\npaths: ${'['.repeat(levels)}${']'.repeat(levels)}\n`;
const har = (entries: unknown[], version = '1.2') => JSON.stringify({ log: { version, creator: { name: 't', version: '1' }, entries } });
const entry = { request: { method: 'GET', url: 'https://a.test/x', headers: [] }, response: { status: 200, headers: [], content: { size: 0, mimeType: 'text/plain' } } };
const nested = (levels: number): unknown => (levels === 0 ? 1 : { n: nested(levels - 1) });
const PM = 'https://schema.getpostman.com/json/collection/v2.1.0/collection.json';
const oa = (extra: object) => JSON.stringify({ openapi: '3.0.3', info: { title: 't', version: '1' }, ...extra });
const get200 = (response: object) => ({ paths: { '/a': { get: { responses: { '200': response } } } } });
/** Variables that each name the next one thousands of times: a 30 KB collection asking for gigabytes. */
const variableBomb = () => {
  const variable = ['a', 'b', 'c', 'd'].map((key, i, all) => ({ key, value: i + 1 < all.length ? `{{${all[i + 1]}}}`.repeat(2000) : 'x' }));
  return JSON.stringify({ info: { schema: PM }, variable, item: [{ request: 'https://a.test/{{a}}', response: [{ code: 200, body: 'ok' }] }] });
};
/** One 100 KB example reached through $ref by 2,000 responses: 200 MB of bodies from a small document. */
const exampleBomb = () => {
  const responses = Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`/r${i}`, { get: { responses: { '200': { $ref: '#/components/responses/Big' } } } }]));
  const big = { description: 'x', content: { 'application/json': { example: { blob: 'x'.repeat(100_000) } } } };
  return oa({ paths: responses, components: { responses: { Big: big } } });
};

/** [format, case, document, media type, what detail must say]: every one a 422. */
const CASES: [string, string, string | Buffer, string, RegExp][] = [
  ['har', 'truncated', fixture('har/shop.har').subarray(0, 20_000), 'application/json', /^log\.entries\[\d+\]: the document ends early/],
  ['har', 'non-JSON', 'GET / HTTP/1.1\r\nHost: a\r\n', 'application/json', /^document: malformed JSON/],
  ['har', 'wrong version', har([entry], '2.0'), 'application/json', /^log\.version: HAR "2\.0" is not supported/],
  ['har', 'not a HAR', '{"hello":"world"}', 'application/json', /^log: required/],
  ['har', 'missing field', har([entry, { ...entry, response: { headers: [], content: {} } }]), 'application/json', /^log\.entries\[1\]\.response\.status: /],
  ['har', 'status out of range', har([{ ...entry, response: { ...entry.response, status: 1000 } }]), 'application/json', /^log\.entries\[0\]\.response\.status: 1000 is not an HTTP status/],
  ['har', 'entries not an array', '{"log":{"version":"1.2","entries":{"a":1}}}', 'application/json', /^log\.entries: must be an array/],
  ['har', 'deeply nested entry', har([{ ...entry, extra: nested(150) }]), 'application/json', /^log\.entries\[0\]: nests deeper than 100 levels/],
  ['har', '10,000-level document', deepJson(10_000), 'application/json', /^document: nests deeper than 100 levels/],
  ['postman', 'truncated', fixture('postman/petstore-expanded-v2.1.json').subarray(0, 5000), 'application/json', /^document: malformed JSON at its end \(truncated\?\)/],
  ['postman', 'wrong version', JSON.stringify({ info: { schema: 'https://schema.getpostman.com/json/collection/v1.0.0/collection.json' }, item: [] }), 'application/json', /^info\.schema: .* is not collection v2\.0 or v2\.1/],
  ['postman', 'missing field', JSON.stringify({ item: [] }), 'application/json', /^info: required/],
  ['postman', 'bad status', JSON.stringify({ info: { schema: PM }, item: [{ request: 'https://a.test/x', response: [{ code: 'OK' }] }] }), 'application/json', /^item\[0\]\.response\[0\]\.code: "OK" is not an HTTP status/],
  ['postman', '10,000-level document', deepJson(10_000), 'application/json', /^document\[0\]\[0\].*…: nests deeper than 100 levels/],
  ['postman', 'non-YAML', 'info: [unclosed\n  - x: {', 'application/yaml', /^document: malformed YAML at line \d+, column \d+/],
  ['openapi', 'wrong version (Swagger 2.0)', JSON.stringify({ swagger: '2.0', paths: {} }), 'application/json', /^swagger: Swagger 2\.0 is not supported/],
  ['openapi', 'wrong version (4.0)', oa({ openapi: '4.0.0', paths: {} }), 'application/json', /^openapi: version '4\.0\.0' is not supported/],
  ['openapi', 'missing field', JSON.stringify({ info: {}, paths: {} }), 'application/json', /^openapi: required/],
  ['openapi', 'circular $ref', oa({ ...get200({ $ref: '#/components/responses/A' }), components: { responses: { A: { $ref: '#/components/responses/B' }, B: { $ref: '#/components/responses/A' } } } }), 'application/json', /^paths\["\/a"\]\.get\.responses\["200"\]\.\$ref: '#\/components\/responses\/A' loops back/],
  ['openapi', 'dangling $ref', oa(get200({ $ref: '#/components/responses/Nope' })), 'application/json', /^paths\["\/a"\]\.get\.responses\["200"\]\.\$ref: '#\/components\/responses\/Nope' names nothing/],
  ['openapi', 'bad status key', oa({ paths: { '/a': { get: { responses: { abc: { description: 'x' } } } } } }), 'application/json', /^paths\["\/a"\]\.get\.responses\.abc: 'abc' is not a status code/],
  ['openapi', 'path without /', oa({ paths: { a: {} } }), 'application/json', /^paths\.a: a path must start with \//],
  ['openapi', '10,000-level JSON', deepJson(10_000), 'application/json', /^document\[0\]\[0\].*…: nests deeper than 100 levels/],
  ['openapi', '10,000-level YAML', deepYaml(10_000), 'application/yaml', /^document: (malformed YAML|nests deeper)/],
  ['postman', 'variables that expand geometrically', variableBomb(), 'application/json', /^item\[0\]\S*: its variables expand past 64 KiB \(at \{\{[a-d]\}\}\)/],
  ['openapi', 'malformed percent-escape in a $ref', oa({ ...get200({ $ref: '#/components/responses/%E0' }), components: { responses: {} } }), 'application/json', /^paths\["\/a"\]\.get\.responses\["200"\]\.\$ref: '#\/components\/responses\/%E0' has a malformed percent-escape/],
  ['openapi', 'one example reused by 2,000 responses', exampleBomb(), 'application/json', /^paths\["\/r\d+"\]\.get\.responses\["200"\]: the document's response bodies add up past 64 MiB/],
  ['openapi', 'truncated YAML', fixture('openapi/tictactoe-3.1.yaml').subarray(0, 700), 'application/yaml', /^(document: malformed YAML|paths)/],
];

describe('importers: bad input is a 422 naming the location, quickly', () => {
  let importers: Map<string, Importer>;
  let close: () => Promise<void>;
  before(async () => ({ importers, close } = await bootImporters()));
  after(() => close());

  for (const [format, name, doc, type, detail] of CASES) {
    it(`${format}: ${name}`, async () => {
      const started = performance.now();
      await assert.rejects(readAll(importers.get(format)!, doc, type), (err: unknown) => {
        assert.ok(isAppError(err), `not an AppError: ${(err as Error).stack}`);
        assert.equal(err.code, 'validation_error');
        assert.match(err.message, detail);
        return true;
      });
      assert.ok(performance.now() - started < 3000, 'bounded time');
    });
  }

  it('openapi and postman: a document read whole past 32 MiB is 413, before it is parsed', async () => {
    const big = oa({ paths: {}, 'x-padding': 'x'.repeat(33 * 1024 * 1024) });
    for (const format of ['openapi', 'postman']) {
      await assert.rejects(readAll(importers.get(format)!, big), (err: unknown) => isAppError(err) && err.code === 'payload_too_large' && /32 MiB/.test(err.message));
    }
  });

  it('openapi: a recursive schema is fine, and its sample stops where it recurs', async () => {
    const doc = oa({ ...get200({ description: 'x', content: { 'application/json': { schema: { $ref: '#/components/schemas/Node' } } } }), components: { schemas: { Node: { type: 'object', properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#/components/schemas/Node' } } } } } } });
    const { drafts } = await readAll(importers.get('openapi')!, doc);
    assert.deepEqual(JSON.parse(String(drafts[0]!.response.body)), { name: 'string', children: [] });
  });

  it('openapi: an explosive schema (each level referencing the next ten times) is cut short with a warning, not a hang', async () => {
    const schemas: Record<string, unknown> = {};
    for (let i = 0; i < 30; i++) schemas[`L${i}`] = { type: 'object', properties: Object.fromEntries(Array.from({ length: 10 }, (_, k) => [`p${k}`, { $ref: `#/components/schemas/L${i + 1}` }])) };
    schemas.L30 = { type: 'string' };
    const doc = oa({ ...get200({ description: 'x', content: { 'application/json': { schema: { $ref: '#/components/schemas/L0' } } } }), components: { schemas } });
    const started = performance.now();
    const { drafts, warnings } = await readAll(importers.get('openapi')!, doc);
    assert.equal(drafts.length, 1);
    assert.match(warnings[0]!, /cut short/);
    assert.ok(performance.now() - started < 2000);
  });
});
