import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { Scrubber, ScrubContext } from '../../kernel/contracts/index.js';
import { UNSCRUBBABLE } from '../../kernel/contracts/scrubber.js';
import { createKernel, type Kernel } from '../../kernel/kernel.js';
import { decodeBatch } from '../../kernel/workers/batch.js';
import { newPseudonymKey } from '../../kernel/scrub/pseudonym.js';
import { BUILTIN_PLUGIN_MODULES } from '../../plugins/index.js';
import { arbitraryRecord } from '../helpers/arbitraries.js';
import { trafficRecord } from '../helpers/traffic.js';

const FIXTURES = ['digits-scrubber', 'exit-scrubber', 'date-extractor'].map((f) => new URL(`../fixtures/plugins/${f}.js`, import.meta.url).pathname);
const RULES = { disable: [], keys: { internal: 'pseudonymize' as const }, patterns: { customer: 'cus_[A-Za-z0-9]{8}' } };
const ctx = (over: Partial<ScrubContext['rules']> = {}): ScrubContext => ({ tenantKey: KEY, rules: { ...RULES, ...over } });
const KEY = newPseudonymKey();
const RUNS = { numRuns: 150 };

// The kernel boots every plugin of every kind, built-in and external alike; the suite below runs
// once per scrubber it finds.
const kernel: Kernel = await createKernel({ builtins: BUILTIN_PLUGIN_MODULES, external: FIXTURES, workers: 1 });
const scrubbers = kernel.plugins.ofKind('scrubber');

describe('scrubber contract', () => {
  before(() => assert.ok(scrubbers.length >= 5, 'built-in and external scrubbers are booted'));
  after(() => kernel.close());

  for (const plugin of scrubbers) {
    const s = plugin.instance as Scrubber;
    describe(plugin.descriptor.name, () => {
      it('is pure, loadable in a worker, and lists its rules', () => {
        assert.equal(plugin.descriptor.pure, true);
        assert.ok(plugin.source);
        for (const r of s.rules) {
          assert.match(r.name, /^[a-z][a-z0-9_]*$/);
          assert.ok(['pii', 'credential', 'custom'].includes(r.category));
          assert.ok(r.description.length > 5);
        }
      });

      it('is deterministic, leaves its input as it was, and keeps records JSON-safe', () => {
        fc.assert(
          fc.property(arbitraryRecord, (record) => {
            const copy = structuredClone(record);
            const a = s.scrub(record, ctx());
            assert.deepEqual(record, copy, 'input untouched');
            assert.deepEqual(s.scrub(copy, ctx()), a, 'same input, same output');
            assert.deepEqual(JSON.parse(JSON.stringify(a.record)), a.record);
            assert.equal(a.record.id, record.id);
            assert.equal(a.record.response?.status, record.response?.status);
          }),
          RUNS,
        );
      });

      it('reports findings by path and rule, never by value', () => {
        fc.assert(
          fc.property(arbitraryRecord, (record) => {
            for (const f of s.scrub(record, ctx()).findings) {
              assert.deepEqual(Object.keys(f).sort(), ['path', 'rule']);
              assert.match(f.path, /^(request|response)\.(path\[\d+\]|query\.|headers\.|body)/);
            }
          }),
          RUNS,
        );
      });

      it('scrubBatch is scrub on each record, findings appended; the same in a worker thread', async () => {
        const records = fc.sample(arbitraryRecord, { numRuns: 40, seed: 7 });
        const batch = s.scrubBatch(records, ctx());
        records.forEach((r, i) => {
          const one = s.scrub(r, ctx());
          const { scrub_findings, ...rest } = batch[i]!;
          assert.deepEqual(rest, one.record);
          assert.deepEqual(scrub_findings ?? [], one.findings);
        });
        const pooled = await kernel.pool.runBatch({ steps: [{ plugin: plugin.source!, name: plugin.descriptor.name, export: 'scrubBatch', options: plugin.options }], batch: records, context: ctx() });
        assert.deepEqual(decodeBatch(pooled.buffer), JSON.parse(JSON.stringify(batch)));
      });

      it('reports only the rules it lists (a tenant pattern by its name), besides the walk’s unscrubbable_body', () => {
        const listed = new Set([...s.rules.map((r) => r.name), UNSCRUBBABLE]);
        if (listed.has('custom_pattern')) for (const name of Object.keys(RULES.patterns)) listed.add(`pattern:${name}`);
        fc.assert(
          fc.property(arbitraryRecord, (record) => {
            for (const f of s.scrub(record, ctx()).findings) assert.ok(listed.has(f.rule), `${f.rule} is not a rule ${plugin.descriptor.name} lists`);
          }),
          RUNS,
        );
      });

      it('finds nothing and changes nothing once its rules are disabled, and never touches a key the tenant keeps', () => {
        const all = s.rules.map((r) => r.name);
        fc.assert(
          fc.property(arbitraryRecord, (record) => {
            const off = s.scrub(record, ctx({ disable: all }));
            // Only the walk's own finding is left: a body it cannot read, whatever the rules.
            assert.deepEqual(off.findings.filter((f) => f.rule !== UNSCRUBBABLE), []);
            assert.deepEqual(off.record, record);
          }),
          RUNS,
        );
        const kept = trafficRecord({ uri: '/x', response: { body: { keepme: { email: 'jane@example.com', token: 'sk_live_abcdefghij0123456789', n: '123' } } } });
        const out = s.scrub(kept, ctx({ keys: { keepme: 'keep' } }));
        assert.equal(out.record.response!.body, kept.response!.body);
        assert.deepEqual(out.findings, []);
      });
    });
  }
});
