import type { WorkerPool } from './workers/pool.js';
import type { PluginRegistry } from './plugin.js';

/** A non-fatal finding a stage made; fatal ones throw. @public */
export interface PipelineMessage {
  stage: string;
  level: 'info' | 'warning';
  text: string;
}

/** Everything a stage function sees besides its batch. @public */
export interface StageContext {
  stage: string;
  signal: AbortSignal;
  message(level: PipelineMessage['level'], text: string): void;
}

/** A stage run in this thread: maps a batch of items to a batch of items. @public */
export type StageFn = (batch: unknown[], ctx: StageContext) => unknown[] | Promise<unknown[]>;

/**
 * One named stage. `run` runs in this thread; `uses` names a plugin and the export of its
 * contract to call with each batch, and `worker: true` sends those calls to the worker pool
 * (only `pure` plugins may run there). `input`/`output` tag what flows in and out, checked
 * between adjacent stages.
 * @public
 */
export interface StageSpec {
  name: string;
  run?: StageFn;
  uses?: { plugin: string; export: string };
  worker?: boolean;
  input?: string;
  output?: string;
}

/** A named pipeline, as data. @public */
export interface PipelineSpec {
  name: string;
  stages: readonly StageSpec[];
  /** Items per batch; default 500. */
  batchSize?: number;
}

/** Validate and freeze a pipeline definition. @public */
export function definePipeline(spec: PipelineSpec): Readonly<PipelineSpec> {
  if (!spec.stages.length) throw new Error(`pipeline '${spec.name}' has no stages.`);
  const names = new Set<string>();
  spec.stages.forEach((stage, i) => {
    if (names.has(stage.name)) throw new Error(`pipeline '${spec.name}': stage name '${stage.name}' is used twice.`);
    names.add(stage.name);
    if (!stage.run === !stage.uses) throw new Error(`pipeline '${spec.name}': stage '${stage.name}' needs exactly one of run or uses.`);
    if (stage.worker && !stage.uses) throw new Error(`pipeline '${spec.name}': stage '${stage.name}' runs in a worker, so it must name a plugin in uses.`);
    const prev = spec.stages[i - 1];
    if (prev?.output && stage.input && prev.output !== stage.input) {
      throw new Error(`pipeline '${spec.name}': stage '${prev.name}' yields ${prev.output} but '${stage.name}' takes ${stage.input}.`);
    }
  });
  if (spec.batchSize !== undefined && (!Number.isInteger(spec.batchSize) || spec.batchSize < 1)) {
    throw new Error(`pipeline '${spec.name}': batchSize must be a positive whole number.`);
  }
  return Object.freeze({ ...spec, stages: Object.freeze([...spec.stages]) });
}

/** Progress as the runner reports it. @public */
export interface PipelineProgress {
  stage: string;
  stageIndex: number;
  /** 0..1 over the whole pipeline. */
  progress: number;
  processed: number;
  total: number;
}

/** Thrown when a run is cancelled through its signal. @public */
export class PipelineCancelled extends Error {
  constructor(pipeline: string) {
    super(`pipeline '${pipeline}' was cancelled`);
    this.name = 'PipelineCancelled';
  }
}

/** What a run yields: the final items and every message. @public */
export interface PipelineEnvelope {
  data: unknown[];
  messages: PipelineMessage[];
}

/**
 * Runs pipelines: each stage takes the whole item list in batches, reports progress after every
 * batch, and stops between batches when the signal aborts.
 * @public
 */
export class PipelineRunner {
  constructor(
    private readonly registry: PluginRegistry,
    private readonly pool: WorkerPool | null,
  ) {}

  async run(
    pipeline: Readonly<PipelineSpec>,
    input: readonly unknown[],
    opts: { signal?: AbortSignal; onProgress?: (p: PipelineProgress) => void } = {},
  ): Promise<PipelineEnvelope> {
    const signal = opts.signal ?? new AbortController().signal;
    const batchSize = pipeline.batchSize ?? 500;
    const messages: PipelineMessage[] = [];
    const stages = pipeline.stages;
    let data: unknown[] = [...input];
    for (let s = 0; s < stages.length; s++) {
      const stage = stages[s]!;
      const ctx: StageContext = {
        stage: stage.name,
        signal,
        message: (level, text) => messages.push({ stage: stage.name, level, text }),
      };
      const call = this.#stageCall(pipeline.name, stage);
      const out: unknown[] = [];
      const total = data.length;
      if (total === 0) opts.onProgress?.({ stage: stage.name, stageIndex: s, progress: (s + 1) / stages.length, processed: 0, total });
      for (let i = 0; i < total; i += batchSize) {
        if (signal.aborted) throw new PipelineCancelled(pipeline.name);
        const result = await call(data.slice(i, i + batchSize), ctx);
        if (!Array.isArray(result)) throw new Error(`pipeline '${pipeline.name}': stage '${stage.name}' must return an array.`);
        for (const item of result) out.push(item);
        const processed = Math.min(i + batchSize, total);
        opts.onProgress?.({ stage: stage.name, stageIndex: s, progress: (s + processed / total) / stages.length, processed, total });
      }
      if (signal.aborted) throw new PipelineCancelled(pipeline.name);
      data = out;
    }
    return { data, messages };
  }

  #stageCall(pipelineName: string, stage: StageSpec): StageFn {
    if (stage.run) return stage.run;
    const { plugin: name, export: member } = stage.uses!;
    const plugin = this.registry.get(name);
    if (!plugin) throw new Error(`pipeline '${pipelineName}': stage '${stage.name}' uses plugin '${name}', which is not booted.`);
    if (stage.worker && this.pool) {
      if (!plugin.descriptor.pure) throw new Error(`pipeline '${pipelineName}': plugin '${name}' is not pure, so it cannot run in a worker.`);
      if (!plugin.source) throw new Error(`pipeline '${pipelineName}': plugin '${name}' was registered without a module source, so a worker cannot load it.`);
      const pool = this.pool;
      return (batch, ctx) => pool.runBatch({ plugin: plugin.source!, name, export: member, options: plugin.options, batch, signal: ctx.signal });
    }
    const fn = (plugin.instance as unknown as Record<string, unknown>)[member];
    if (typeof fn !== 'function') throw new Error(`pipeline '${pipelineName}': plugin '${name}' has no function '${member}'.`);
    return (batch) => (fn as (b: unknown[]) => unknown[]).call(plugin.instance, batch);
  }
}
