import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { stringify as toYaml } from 'yaml';
import { decodeBody } from '../../kernel/domain/index.js';
import { isAppError } from '../../kernel/errors.js';
import type { Importer } from '../../kernel/public.js';
import { bootImporters, readAll } from '../helpers/importers.js';

const RUNS = { numRuns: 60 };
const segment = fc.stringMatching(/^[a-z0-9][a-z0-9_-]{0,11}$/);
const pathOf = fc.array(segment, { minLength: 1, maxLength: 4 }).map((s) => `/${s.join('/')}`);
const status = fc.integer({ min: 200, max: 599 }).filter((s) => s !== 304);
const method = fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE');
const chunk = fc.integer({ min: 1, max: 4096 });
const query = fc.dictionary(segment, fc.array(fc.string({ maxLength: 8 }), { minLength: 1, maxLength: 2 }), { maxKeys: 3 });

describe('importers: properties (fast-check)', () => {
  let importers: Map<string, Importer>;
  let close: () => Promise<void>;
  before(async () => ({ importers, close } = await bootImporters()));
  after(() => close());

  it('har: every exchange becomes one draft with its path, query, status and body byte for byte, however the stream is cut', async () => {
    const entry = fc.record({ method, path: pathOf, query, status, body: fc.oneof(fc.string({ maxLength: 200 }), fc.uint8Array({ maxLength: 64 })) });
    await fc.assert(
      fc.asyncProperty(fc.array(entry, { maxLength: 12 }), chunk, async (entries, size) => {
        const har = {
          log: {
            version: '1.2',
            creator: { name: 'fc', version: '1' },
            entries: entries.map((e) => {
              const q = new URLSearchParams(Object.entries(e.query).flatMap(([k, vs]) => vs.map((v): [string, string] => [k, v])));
              const bytes = typeof e.body === 'string' ? Buffer.from(e.body) : Buffer.from(e.body);
              return {
                request: { method: e.method, url: `https://api.test${e.path}${q.size ? `?${q}` : ''}`, headers: [] },
                response: { status: e.status, headers: [{ name: 'X-Id', value: '1' }], content: { size: bytes.length, mimeType: 'application/octet-stream', text: bytes.toString('base64'), encoding: 'base64' } },
              };
            }),
          },
        };
        const { drafts } = await readAll(importers.get('har')!, JSON.stringify(har), 'application/json', size);
        assert.equal(drafts.length, entries.length);
        drafts.forEach((d, i) => {
          const e = entries[i]!;
          assert.equal(d.method, e.method);
          assert.equal(d.path, e.path);
          assert.deepEqual(d.query, Object.keys(e.query).length ? { ...e.query } : null);
          assert.equal(d.response.status, e.status);
          assert.deepEqual(decodeBody(d.response.body), Buffer.from(typeof e.body === 'string' ? Buffer.from(e.body) : e.body));
          assert.equal(d.host, 'api.test');
          assert.equal(d.origin, `log.entries[${i}]`);
        });
      }),
      RUNS,
    );
  });

  it('postman: each saved example under any folder nesting becomes one draft at its resolved path', async () => {
    type Node = { kind: 'request'; path: string; codes: number[] } | { kind: 'folder'; items: Node[] };
    const tree = fc.letrec<{ node: Node }>((tie) => ({
      node: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        fc.record({ kind: fc.constant('request' as const), path: pathOf, codes: fc.array(status, { maxLength: 3 }) }),
        fc.record({ kind: fc.constant('folder' as const), items: fc.array(tie('node'), { maxLength: 3 }) }),
      ),
    })).node;
    await fc.assert(
      fc.asyncProperty(fc.array(tree, { maxLength: 4 }), fc.boolean(), async (items, yaml) => {
        const expected: { path: string; code: number }[] = [];
        const toItem = (n: Node): unknown => {
          if (n.kind === 'folder') return { name: 'folder', item: n.items.map(toItem) };
          const url = { raw: `{{baseUrl}}${n.path}`, host: ['{{baseUrl}}'], path: n.path.slice(1).split('/') };
          for (const code of n.codes) expected.push({ path: `/base${n.path}`, code });
          return { name: 'req', request: { method: 'GET', url }, response: n.codes.map((code) => ({ name: 'ex', originalRequest: { method: 'GET', url }, code, header: [{ key: 'Content-Type', value: 'application/json' }], body: '{}' })) };
        };
        const doc = { info: { name: 'c', schema: 'https://schema.getpostman.com/json/collection/v2.1.0/collection.json' }, variable: [{ key: 'baseUrl', value: 'https://api.test/base' }], item: items.map(toItem) };
        const { drafts } = await readAll(importers.get('postman')!, yaml ? toYaml(doc) : JSON.stringify(doc), yaml ? 'application/yaml' : 'application/json');
        assert.deepEqual(drafts.map((d) => ({ path: d.path, code: d.response.status })), expected);
        assert.ok(drafts.every((d) => d.host === 'api.test'));
      }),
      RUNS,
    );
  });

  it('openapi: one draft per operation and status, templates kept, sample paths filling them', async () => {
    const op = fc.record({ method: fc.constantFrom('get', 'post', 'delete'), codes: fc.uniqueArray(status, { minLength: 1, maxLength: 3 }) });
    const pathItem = fc.record({ segments: fc.array(fc.oneof(segment, segment.map((s) => `{${s}}`)), { minLength: 1, maxLength: 4 }), ops: fc.uniqueArray(op, { selector: (o) => o.method, minLength: 1, maxLength: 3 }) });
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(pathItem, { selector: (p) => p.segments.join('/'), maxLength: 6 }), async (items) => {
        const paths: Record<string, unknown> = {};
        let expected = 0;
        for (const item of items) {
          const path = `/${item.segments.join('/')}`;
          const params = [...new Set(item.segments.filter((s) => s.startsWith('{')).map((s) => s.slice(1, -1)))].map((name) => ({ name, in: 'path', required: true, schema: { type: 'integer', example: 7 } }));
          paths[path] = Object.fromEntries(
            item.ops.map((o) => {
              expected += o.codes.length;
              return [o.method, { parameters: params, responses: Object.fromEntries(o.codes.map((c) => [String(c), { description: 'x', content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } } }])) }];
            }),
          );
        }
        const doc = { openapi: '3.1.0', info: { title: 't', version: '1' }, servers: [{ url: 'https://api.test/v9' }], paths, components: { schemas: { Thing: { type: 'object', properties: { id: { type: 'integer' }, next: { $ref: '#/components/schemas/Thing' } } } } } };
        const { drafts } = await readAll(importers.get('openapi')!, JSON.stringify(doc));
        assert.equal(drafts.length, expected);
        for (const d of drafts) {
          assert.ok(d.uri_template!.startsWith('/v9/'));
          assert.equal(d.path, d.uri_template!.replace(/\{[^}]+\}/g, '7'));
          assert.deepEqual(JSON.parse(String(d.response.body)), { id: 0 }, 'the recursive property stops where it recurs');
        }
      }),
      RUNS,
    );
  });

  it('any bytes at all: every importer yields or refuses with a 422, never another error', async () => {
    const noise = fc.oneof(
      fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)),
      fc.json({ maxDepth: 6 }).map((j) => Buffer.from(j)),
      fc.jsonValue({ maxDepth: 4 }).map((v) => Buffer.from(JSON.stringify({ log: { version: '1.2', entries: [v] }, openapi: '3.0.0', paths: { '/x': v }, info: { schema: 'https://schema.getpostman.com/json/collection/v2.1.0/collection.json' }, item: [v], mappings: [v] }))),
    );
    await fc.assert(
      fc.asyncProperty(noise, fc.constantFrom('har', 'postman', 'openapi', 'wiremock'), async (bytes, format) => {
        try {
          await readAll(importers.get(format)!, bytes, format === 'openapi' ? 'application/yaml' : 'application/json', 13);
        } catch (err) {
          assert.ok(isAppError(err) && err.code === 'validation_error', `${format}: ${(err as Error).stack}`);
        }
      }),
      { numRuns: 300 },
    );
  });
});
