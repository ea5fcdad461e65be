import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { ExchangeRecord, Extractor } from '../../kernel/contracts/index.js';
import { createKernel, type Kernel } from '../../kernel/kernel.js';
import { decodeBatch } from '../../kernel/workers/batch.js';
import { BUILTIN_PLUGIN_MODULES } from '../../plugins/index.js';
import { arbitraryRecord } from '../helpers/arbitraries.js';

const FIXTURES = ['digits-scrubber', 'date-extractor'].map((f) => new URL(`../fixtures/plugins/${f}.js`, import.meta.url).pathname);
const kernel: Kernel = await createKernel({ builtins: BUILTIN_PLUGIN_MODULES, external: FIXTURES, workers: 1 });
const extractors = kernel.plugins.ofKind('extractor');
const traffic = fc.array(arbitraryRecord, { maxLength: 30 });
const RUNS = { numRuns: 100 };
const pathOf = (r: ExchangeRecord) => r.request.uri.split('?')[0]!;

describe('extractor contract', () => {
  before(() => assert.ok(extractors.length >= 3, 'built-in and external extractors are booted'));
  after(() => kernel.close());

  for (const plugin of extractors) {
    const x = plugin.instance as Extractor;
    const prepare = (records: ExchangeRecord[]) => (x.normalizeBatch ? x.normalizeBatch(records) : records);
    describe(plugin.descriptor.name, () => {
      it('is pure, loadable in a worker, and says what it produces', () => {
        assert.equal(plugin.descriptor.pure, true);
        assert.ok(plugin.source);
        assert.ok(['uri_template', 'patterns'].includes(x.produces));
        assert.deepEqual(x.produces === 'uri_template' ? x.extract([]) : x.extract([], []), []);
      });

      it('normalizeBatch keeps every record, in order, adding only its own features; the same in a worker', async () => {
        if (!x.normalizeBatch) return;
        fc.assert(
          fc.property(traffic, (records) => {
            const copy = structuredClone(records);
            const out = x.normalizeBatch!(records);
            assert.deepEqual(records, copy, 'input untouched');
            assert.equal(out.length, records.length);
            out.forEach((r, i) => {
              const { features, ...rest } = r;
              assert.deepEqual(rest, records[i]);
              assert.deepEqual(Object.keys(features ?? {}), [plugin.descriptor.name]);
            });
            assert.deepEqual(JSON.parse(JSON.stringify(out)), out);
          }),
          RUNS,
        );
        const records = fc.sample(arbitraryRecord, { numRuns: 30, seed: 3 });
        const pooled = await kernel.pool.runBatch({ steps: [{ plugin: plugin.source!, name: plugin.descriptor.name, export: 'normalizeBatch', options: plugin.options }], batch: records });
        assert.deepEqual(decodeBatch(pooled.buffer), x.normalizeBatch(records));
      });

      if (x.produces === 'uri_template') {
        it('gives each record a template that fits its path, whatever the order of the records', () => {
          fc.assert(
            fc.property(traffic, (records) => {
              const prepared = prepare(records);
              const templates = x.extract(prepared);
              assert.equal(templates.length, records.length);
              templates.forEach((t, i) => {
                if (t === null) return;
                const segs = pathOf(records[i]!).split('/');
                const parts = t.split('/');
                assert.equal(parts.length, segs.length, `${t} fits ${pathOf(records[i]!)}`);
                const names = parts.filter((p) => p.startsWith('{'));
                parts.forEach((p, j) => assert.ok(/^\{[A-Za-z_][A-Za-z0-9_]*\}$/.test(p) || p === segs[j]));
                assert.equal(new Set(names).size, names.length, 'parameter names are unique within a template');
              });
              const reversed = x.extract([...prepared].reverse());
              assert.deepEqual(reversed, [...templates].reverse(), 'order-independent');
            }),
            RUNS,
          );
        });
      } else {
        it('describes only endpoints it was given, with JSON-safe patterns, deterministically', () => {
          fc.assert(
            fc.property(traffic, (records) => {
              const prepared = prepare(records);
              const templates = records.map(pathOf);
              const found = x.extract(prepared, templates);
              const known = new Set(records.map((r, i) => `${r.request.method} ${templates[i]}`));
              for (const e of found) {
                assert.ok(known.has(`${e.method} ${e.uri_template}`));
                assert.ok(e.samples >= 1);
                assert.deepEqual(JSON.parse(JSON.stringify(e)), e);
              }
              assert.equal(found.reduce((n, e) => n + e.samples, 0), records.length);
              assert.deepEqual(x.extract(prepare(structuredClone(records)), templates), found);
            }),
            RUNS,
          );
        });
      }
    });
  }
});
