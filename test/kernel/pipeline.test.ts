import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createKernel, type Kernel } from '../../kernel/kernel.js';
import { definePipeline, PipelineCancelled, PipelineStageError, type PipelineProgress } from '../../kernel/pipeline.js';
import type { ScrubbedRecord, ScrubContext } from '../../kernel/contracts/index.js';
import { newPseudonymKey } from '../../kernel/scrub/pseudonym.js';
import { CRASH_MARKER } from '../fixtures/plugins/exit-scrubber.js';
import { trafficRecord } from '../helpers/traffic.js';

const FIXTURE = new URL('../fixtures/plugins/digits-scrubber.js', import.meta.url).pathname;
const EXIT = new URL('../fixtures/plugins/exit-scrubber.js', import.meta.url).pathname;
const CONTEXT: ScrubContext = { tenantKey: newPseudonymKey(), rules: { disable: [], keys: {}, patterns: {} } };

/** Runs `fn` with a kernel of no built-in plugins and one worker, closed after. */
async function withKernel(fn: (kernel: Kernel) => Promise<void>): Promise<void> {
  const kernel = await createKernel({ builtins: [], workers: 1 });
  try {
    await fn(kernel);
  } finally {
    await kernel.close();
  }
}

describe('pipeline runner', () => {
  it('runs named stages in batches and reports progress from 0 to 1', async () => {
    const kernel = await createKernel({ builtins: [], workers: 1 });
    try {
      const seen: number[] = [];
      const pipeline = definePipeline({
        name: 'double-then-filter',
        batchSize: 10,
        stages: [
          { name: 'double', run: (batch) => { seen.push(batch.length); return batch.map((n) => (n as number) * 2); } },
          { name: 'even-tens', run: (batch) => batch.filter((n) => (n as number) % 20 === 0) },
        ],
      });
      const progress: PipelineProgress[] = [];
      const out = await kernel.pipelines.run(pipeline, Array.from({ length: 35 }, (_, i) => i), { onProgress: (p) => progress.push(p) });
      assert.deepEqual(out.data, [0, 20, 40, 60]);
      assert.deepEqual(seen, [10, 10, 10, 5]);
      const values = progress.map((p) => p.progress);
      assert.deepEqual([...values].sort((a, b) => a - b), values, 'monotonic');
      assert.equal(values.at(-1), 1);
      assert.ok(values[0]! > 0 && values[0]! < 1);
      assert.deepEqual(progress.map((p) => p.stage).filter((s, i, a) => a.indexOf(s) === i), ['double', 'even-tens']);
    } finally {
      await kernel.close();
    }
  });

  it('stops between batches when cancelled', async () => {
    const kernel = await createKernel({ builtins: [], workers: 1 });
    try {
      const controller = new AbortController();
      let batches = 0;
      const pipeline = definePipeline({ name: 'slow', batchSize: 1, stages: [{ name: 'count', run: (b) => { if (++batches === 3) controller.abort(); return b; } }] });
      await assert.rejects(kernel.pipelines.run(pipeline, [1, 2, 3, 4, 5, 6], { signal: controller.signal }), PipelineCancelled);
      assert.equal(batches, 3);
    } finally {
      await kernel.close();
    }
  });

  it('never reports a run cancelled once its last stage has ended, nor during a stage that commits', () =>
    withKernel(async (kernel) => {
      const after = new AbortController();
      const last = definePipeline({ name: 'last', stages: [{ name: 'a', run: (b) => b }, { name: 'b', run: (b) => (after.abort(), b) }] });
      assert.deepEqual((await kernel.pipelines.run(last, [1, 2], { signal: after.signal })).data, [1, 2]);

      const during = new AbortController();
      let committed = false;
      const commit = definePipeline({
        name: 'commit',
        batchSize: 1,
        stages: [
          { name: 'prepare', run: (b) => b },
          {
            name: 'promote',
            whole: true,
            commits: true,
            run: async (b, ctx) => {
              during.abort();
              await new Promise((r) => setTimeout(r, 5));
              committed = !ctx.signal.aborted;
              return b;
            },
          },
          { name: 'after', run: (b) => b },
        ],
      });
      await assert.rejects(kernel.pipelines.run(commit, [1, 2, 3], { signal: during.signal }), PipelineCancelled, 'a stage after the commit still stops');
      assert.ok(committed, 'the committing stage never saw the abort');
    }));

  it('ends batches by weight as well as count, so multi-megabyte items never share one huge batch', () =>
    withKernel(async (kernel) => {
      const sizes: number[] = [];
      const pipeline = definePipeline({ name: 'heavy', batchSize: 250, batchBytes: 8 << 20, itemBytes: (s) => (s as string).length, stages: [{ name: 'count', run: (b) => (sizes.push(b.length), b) }] });
      const items = [3, 3, 3, 3, 10, 1, 1].map((mb) => 'x'.repeat(mb << 20));
      assert.equal((await kernel.pipelines.run(pipeline, items)).data.length, 7);
      assert.deepEqual(sizes, [2, 2, 1, 2], 'an item over the limit travels alone');
      assert.throws(() => definePipeline({ name: 'p', batchBytes: 10, stages: [{ name: 'a', run: (b) => b }] }), /go together/);
    }));

  it('runs chains of pure plugins in the worker pool, adjacent worker stages together, order kept', async () => {
    const kernel = await createKernel({ builtins: [], external: [FIXTURE, EXIT], workers: 2 });
    try {
      const digits = { plugin: 'acme/digits-scrubber', export: 'scrubBatch' };
      const exit = { plugin: 'fault/exit-scrubber', export: 'scrubBatch' };
      const pipeline = definePipeline({
        name: 'scrub',
        batchSize: 2,
        stages: [
          { name: 'first', uses: [exit, digits], worker: true },
          { name: 'second', uses: exit, worker: true },
        ],
      });
      const records = Array.from({ length: 7 }, (_, i) => trafficRecord({ uri: `/r/${i}`, response: { body: { n: `id ${i}23` } } }));
      const progress: PipelineProgress[] = [];
      const out = await kernel.pipelines.run(pipeline, records, { context: CONTEXT, onProgress: (p) => progress.push(p) });
      const rows = out.data as ScrubbedRecord[];
      assert.deepEqual(rows.map((r) => r.id), records.map((r) => r.id), 'order kept');
      assert.deepEqual(rows.map((r) => JSON.parse(String(r.response!.body)).n), records.map(() => 'id ###'));
      assert.deepEqual(rows[0]!.scrub_findings, [{ path: 'response.body.n', rule: 'digits' }]);
      assert.equal(progress.at(-1)!.progress, 1);
      assert.deepEqual([...new Set(progress.map((p) => p.stage))], ['first', 'second']);

      // A worker thread that dies mid-batch fails the run with the stage named; this process lives on.
      const crash = [...records, trafficRecord({ uri: `/r/${CRASH_MARKER}` })];
      await assert.rejects(kernel.pipelines.run(pipeline, crash, { context: CONTEXT }), (err: unknown) => {
        assert.ok(err instanceof PipelineStageError);
        assert.equal(err.stage, 'first+second');
        assert.match(String((err.cause as Error).message), /worker exited/);
        return true;
      });
      // The pool replaces the thread: the next run works.
      assert.equal((await kernel.pipelines.run(pipeline, records, { context: CONTEXT })).data.length, 7);
    } finally {
      await kernel.close();
    }
  });

  it('gives a whole stage every item at once and the run context to every stage', async () => {
    const kernel = await createKernel({ builtins: [], workers: 1 });
    try {
      const sizes: number[] = [];
      const pipeline = definePipeline({
        name: 'whole',
        batchSize: 2,
        stages: [
          { name: 'tag', run: (b, ctx) => b.map((n) => `${String(ctx.context)}${String(n)}`) },
          { name: 'all', whole: true, run: (b) => (sizes.push(b.length), [b.join(',')]) },
        ],
      });
      const out = await kernel.pipelines.run(pipeline, [1, 2, 3, 4, 5], { context: 'x' });
      assert.deepEqual(out.data, ['x1,x2,x3,x4,x5']);
      assert.deepEqual(sizes, [5]);
    } finally {
      await kernel.close();
    }
  });

  it('refuses adjacent stages with the same name, empty pipelines, and whole stages in workers', () => {
    assert.throws(() => definePipeline({ name: 'p', stages: [] }));
    assert.throws(() => definePipeline({ name: 'p', stages: [{ name: 'a', uses: { plugin: 'x', export: 'y' }, worker: true, whole: true }] }), /cannot run in a worker/);
    assert.throws(() => definePipeline({ name: 'p', stages: [{ name: 'a', run: (b) => b }, { name: 'a', run: (b) => b }] }));
  });
});
