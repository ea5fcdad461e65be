import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { batchCount, encodeBatch, type EncodedBatch } from './batch.js';
import type { StageStep, StageTask } from './stage-worker.js';

/** The Piscina pool CPU-heavy stages run in. @public */
export class WorkerPool {
  readonly #pool: Piscina;

  /** `size` 0 means one thread per core. */
  constructor(size = 0) {
    const threads = size > 0 ? size : availableParallelism();
    this.#pool = new Piscina({
      filename: new URL('./stage-worker.js', import.meta.url).href,
      minThreads: 0,
      maxThreads: threads,
      idleTimeout: 30_000,
    });
  }

  get size(): number {
    return this.#pool.options.maxThreads;
  }

  /**
   * Runs one batch through a chain of plugin exports in one worker: one round trip per batch,
   * not per record nor per step. The batch crosses as one moved buffer each way (the answer is
   * left encoded until someone needs its items). `context` (small, plain data) is cloned to the
   * worker and given to every step.
   */
  async runBatch(task: { steps: readonly StageStep[]; batch: readonly unknown[]; context?: unknown; signal?: AbortSignal }): Promise<EncodedBatch> {
    const encoded = encodeBatch(task.batch);
    const payload: StageTask = { steps: task.steps, context: task.context ?? null, payload: encoded.buffer };
    const buffer = (await this.#pool.run(payload, { transferList: [encoded.buffer], ...(task.signal && { signal: task.signal }) })) as ArrayBuffer;
    return { buffer, count: batchCount(buffer) };
  }

  async close(): Promise<void> {
    await this.#pool.destroy();
  }
}
