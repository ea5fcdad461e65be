import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import type { StageTask } from './stage-worker.js';

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
   * Runs one batch through a plugin export in a worker. The batch crosses as one JSON buffer,
   * moved (not copied) both ways, so there is one round trip per batch, not per record.
   */
  async runBatch(task: { plugin: string; name: string; export: string; options: unknown; batch: unknown[]; signal?: AbortSignal }): Promise<unknown[]> {
    const encoded = new TextEncoder().encode(JSON.stringify(task.batch));
    const buffer = encoded.byteLength === encoded.buffer.byteLength ? (encoded.buffer as ArrayBuffer) : encoded.slice().buffer;
    const payload: StageTask = { plugin: task.plugin, name: task.name, export: task.export, options: task.options, payload: buffer };
    const result = (await this.#pool.run(payload, { transferList: [buffer], ...(task.signal && { signal: task.signal }) })) as ArrayBuffer;
    return JSON.parse(new TextDecoder().decode(result)) as unknown[];
  }

  async close(): Promise<void> {
    await this.#pool.destroy();
  }
}
