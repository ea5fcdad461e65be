import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createKernel } from '../../kernel/kernel.js';
import { definePipeline, PipelineCancelled, type PipelineProgress } from '../../kernel/pipeline.js';

const FIXTURE = new URL('../fixtures/plugins/digits-scrubber.js', import.meta.url).pathname;

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

  it('runs a CPU-heavy stage of a pure plugin in the worker pool', async () => {
    const kernel = await createKernel({ builtins: [], external: [FIXTURE], workers: 1 });
    try {
      const pipeline = definePipeline({ name: 'scrub', batchSize: 2, stages: [{ name: 'scrub', uses: { plugin: 'acme/digits-scrubber', export: 'scrubBatch' }, worker: true }] });
      const out = await kernel.pipelines.run(pipeline, [{ a: 'id 123' }, { a: '4' }, { a: 'x' }]);
      const rows = out.data as { a: string; threadId: number }[];
      assert.deepEqual(rows.map((r) => r.a), ['id ###', '#', 'x']);
      assert.ok(rows.every((r) => r.threadId > 0), 'ran off the main thread');
    } finally {
      await kernel.close();
    }
  });

  it('refuses adjacent stages with the same name and empty pipelines', () => {
    assert.throws(() => definePipeline({ name: 'p', stages: [] }));
    assert.throws(() => definePipeline({ name: 'p', stages: [{ name: 'a', run: (b) => b }, { name: 'a', run: (b) => b }] }));
  });
});
