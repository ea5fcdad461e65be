import { runChain } from './chain.js';
import type { PluginRegistry } from './plugin.js';
import { decodeBatch, type EncodedBatch } from './workers/batch.js';
import type { WorkerPool } from './workers/pool.js';
import type { StageStep } from './workers/stage-worker.js';

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
  /** The run's context (`run(..., {context})`), e.g. the tenant's scrub key and rules. */
  context: unknown;
  message(level: PipelineMessage['level'], text: string): void;
}

/** A stage run in this thread: maps a batch of items to a batch of items. @public */
export type StageFn = (batch: unknown[], ctx: StageContext) => unknown[] | Promise<unknown[]>;

/** A plugin export a stage calls with each batch and the run's context. @public */
export interface PluginCall {
  plugin: string;
  export: string;
}

/**
 * One named stage. `run` runs in this thread; `uses` names plugin exports to call with each
 * batch (several are chained, each taking the previous one's output), and `worker: true` sends
 * those calls to the worker pool, one round trip per batch for the whole chain (only `pure`
 * plugins may run there). `whole: true` hands the stage every item at once, for work that must
 * see all of them (cardinality, grouping). `input`/`output` tag what flows in and out, checked
 * between adjacent stages.
 * @public
 */
export interface StageSpec {
  name: string;
  run?: StageFn;
  uses?: PluginCall | readonly PluginCall[];
  worker?: boolean;
  whole?: boolean;
  /**
   * The stage makes the run's effects permanent (a transition's promote commits the library):
   * once it has begun it is not cancelled (its signal never aborts), so a run never reports
   * `cancelled` after its effects are in. The stage itself decides, inside its commit, whether a
   * cancel still counts.
   */
  commits?: boolean;
  input?: string;
  output?: string;
}

/** A named pipeline, as data. @public */
export interface PipelineSpec {
  name: string;
  stages: readonly StageSpec[];
  /** Items per batch; default 500. */
  batchSize?: number;
  /**
   * Also ends a batch before its items' {@link PipelineSpec.itemBytes} would pass this many, so
   * a batch of large items (recorded bodies of megabytes) stays far from V8's string limit when
   * it is encoded for a worker. An item heavier than the limit goes in a batch of its own.
   */
  batchBytes?: number;
  /** The weight of an item for `batchBytes` (needed with it): any item a stage yields may be weighed. */
  itemBytes?: (item: unknown) => number;
}

/** Validate and freeze a pipeline definition. @public */
export function definePipeline(spec: PipelineSpec): Readonly<PipelineSpec> {
  if (!spec.stages.length) throw new Error(`pipeline '${spec.name}' has no stages.`);
  const names = new Set<string>();
  spec.stages.forEach((stage, i) => {
    if (names.has(stage.name)) throw new Error(`pipeline '${spec.name}': stage name '${stage.name}' is used twice.`);
    names.add(stage.name);
    const uses = stage.uses === undefined ? null : [stage.uses].flat();
    if (!stage.run === !uses) throw new Error(`pipeline '${spec.name}': stage '${stage.name}' needs exactly one of run or uses.`);
    if (uses && !uses.length) throw new Error(`pipeline '${spec.name}': stage '${stage.name}' uses no plugin.`);
    if (stage.worker && !uses) throw new Error(`pipeline '${spec.name}': stage '${stage.name}' runs in a worker, so it must name a plugin in uses.`);
    if (stage.worker && stage.whole) throw new Error(`pipeline '${spec.name}': stage '${stage.name}' sees every item at once, so it cannot run in a worker.`);
    const prev = spec.stages[i - 1];
    if (prev?.output && stage.input && prev.output !== stage.input) {
      throw new Error(`pipeline '${spec.name}': stage '${prev.name}' yields ${prev.output} but '${stage.name}' takes ${stage.input}.`);
    }
  });
  if (spec.batchSize !== undefined && (!Number.isInteger(spec.batchSize) || spec.batchSize < 1)) {
    throw new Error(`pipeline '${spec.name}': batchSize must be a positive whole number.`);
  }
  if (spec.batchBytes !== undefined && (!Number.isInteger(spec.batchBytes) || spec.batchBytes < 1)) {
    throw new Error(`pipeline '${spec.name}': batchBytes must be a positive whole number.`);
  }
  if ((spec.batchBytes === undefined) !== (spec.itemBytes === undefined)) throw new Error(`pipeline '${spec.name}': batchBytes and itemBytes go together.`);
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

/**
 * Thrown when a stage fails. The message names the pipeline, stage and plugins only; what the
 * stage threw is the `cause`, whose message may quote the data (callers decide what to show).
 * @public
 */
export class PipelineStageError extends Error {
  constructor(
    readonly pipeline: string,
    readonly stage: string,
    readonly plugins: readonly string[],
    cause: unknown,
  ) {
    super(`pipeline '${pipeline}': stage '${stage}'${plugins.length ? ` (${plugins.join(', ')})` : ''} failed`, { cause });
    this.name = 'PipelineStageError';
  }
}

/** What a run yields: the final items and every message. @public */
export interface PipelineEnvelope {
  data: unknown[];
  messages: PipelineMessage[];
}

/** Items between stages: decoded, or still encoded as a worker stage answered them. */
type Batch = unknown[] | EncodedBatch;

const count = (b: Batch) => (Array.isArray(b) ? b.length : b.count);
const items = (b: Batch) => (Array.isArray(b) ? b : decodeBatch(b.buffer));

/** How a pipeline cuts items into batches: at most `size` items, and `bytes` when given. */
interface Cut {
  size: number;
  bytes?: { limit: number; weigh: (item: unknown) => number };
}

function chunk(list: readonly unknown[], cut: Cut): unknown[][] {
  const out: unknown[][] = [];
  let batch: unknown[] = [];
  let weight = 0;
  for (const item of list) {
    const w = cut.bytes ? cut.bytes.weigh(item) : 0;
    if (batch.length && (batch.length >= cut.size || (cut.bytes && weight + w > cut.bytes.limit))) {
      out.push(batch);
      batch = [];
      weight = 0;
    }
    batch.push(item);
    weight += w;
  }
  if (batch.length) out.push(batch);
  return out;
}

// The signal of a stage that commits: once it has begun, the run ends as that stage does.
const NEVER = new AbortController().signal;

/**
 * Runs pipelines: each stage takes the items in batches (or all at once when `whole`), reports
 * progress after every batch, and stops between batches and between stages when the signal
 * aborts; never after the last stage has ended (its output is the run's) nor during a stage that
 * `commits`. Worker stages
 * keep two batches in flight per pool thread, and adjacent worker stages run together, a
 * batch passing through all of them in one round trip (progress names the first of them until
 * every batch is through, then the others complete at once).
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
    opts: { signal?: AbortSignal; onProgress?: (p: PipelineProgress) => void; onMessage?: (m: PipelineMessage) => void; context?: unknown } = {},
  ): Promise<PipelineEnvelope> {
    const cut: Cut = { size: pipeline.batchSize ?? 500, ...(pipeline.batchBytes !== undefined && pipeline.itemBytes && { bytes: { limit: pipeline.batchBytes, weigh: pipeline.itemBytes } }) };
    const messages: PipelineMessage[] = [];
    const stages = pipeline.stages;
    let batches: Batch[] = chunk(input, cut);
    for (let s = 0; s < stages.length; ) {
      // Adjacent worker stages run together: each batch goes through all of them in one round
      // trip (one decode and one encode per batch, not one per stage).
      const group = [stages[s]!];
      while (this.pool && group.at(-1)!.worker && stages[s + group.length]?.worker) group.push(stages[s + group.length]!);
      if (opts.signal?.aborted) throw new PipelineCancelled(pipeline.name);
      const signal = group.some((g) => g.commits) ? NEVER : (opts.signal ?? NEVER);
      const stage = group[0]!;
      const total = batches.reduce((n, b) => n + count(b), 0);
      let processed = 0;
      const report = (n: number) => {
        processed += n;
        opts.onProgress?.({ stage: stage.name, stageIndex: s, progress: total ? (s + processed / total) / stages.length : (s + 1) / stages.length, processed, total });
      };
      const ctx: StageContext = {
        stage: stage.name,
        signal,
        context: opts.context,
        message: (level, text) => {
          const m = { stage: stage.name, level, text };
          messages.push(m);
          opts.onMessage?.(m);
        },
      };
      const plugins = group.flatMap((g) => (g.uses ? [g.uses].flat().map((u) => u.plugin) : []));
      if (!total) report(0);
      try {
        batches = await this.#runStage(pipeline.name, group, batches, ctx, cut, report);
      } catch (err) {
        if (signal.aborted) throw new PipelineCancelled(pipeline.name);
        throw err instanceof PipelineStageError ? err : new PipelineStageError(pipeline.name, group.map((g) => g.name).join('+'), plugins, err);
      }
      const out = batches.reduce((n, b) => n + count(b), 0);
      for (let k = 1; k < group.length; k++) opts.onProgress?.({ stage: group[k]!.name, stageIndex: s + k, progress: (s + k + 1) / stages.length, processed: out, total: out });
      s += group.length;
    }
    return { data: batches.flatMap(items), messages };
  }

  async #runStage(pipelineName: string, group: readonly StageSpec[], batches: Batch[], ctx: StageContext, cut: Cut, report: (n: number) => void): Promise<Batch[]> {
    const stage = group[0]!;
    const check = (out: unknown): unknown[] => {
      if (!Array.isArray(out)) throw new Error(`pipeline '${pipelineName}': stage '${stage.name}' must return an array.`);
      return out;
    };
    if (stage.worker && this.pool) {
      const steps = group.flatMap((g) => this.#workerSteps(pipelineName, g));
      const pool = this.pool;
      const out: Batch[] = new Array(batches.length);
      let next = 0;
      let failed = false;
      const lane = async () => {
        while (next < batches.length && !failed) {
          if (ctx.signal.aborted) throw new PipelineCancelled(pipelineName);
          const i = next++;
          try {
            out[i] = await pool.runBatch({ steps, batch: items(batches[i]!), context: ctx.context, signal: ctx.signal });
          } catch (err) {
            failed = true;
            throw err;
          }
          report(count(batches[i]!));
        }
      };
      // Two batches per thread: one running, one encoded and waiting, so a thread never idles
      // while this thread prepares its next batch.
      await Promise.all(Array.from({ length: Math.min(pool.size * 2, batches.length) }, lane));
      return out;
    }
    const call = this.#threadCall(pipelineName, stage);
    if (stage.whole) {
      const all = batches.flatMap(items);
      const out = check(await call(all, ctx));
      report(all.length);
      return chunk(out, cut);
    }
    const out: Batch[] = [];
    for (const batch of batches) {
      if (ctx.signal.aborted) throw new PipelineCancelled(pipelineName);
      out.push(check(await call(items(batch), ctx)));
      report(count(batch));
    }
    return out;
  }

  #plugin(pipelineName: string, stage: StageSpec, name: string) {
    const plugin = this.registry.get(name);
    if (!plugin) throw new Error(`pipeline '${pipelineName}': stage '${stage.name}' uses plugin '${name}', which is not booted.`);
    return plugin;
  }

  #workerSteps(pipelineName: string, stage: StageSpec): StageStep[] {
    return [stage.uses!].flat().map(({ plugin: name, export: member }) => {
      const plugin = this.#plugin(pipelineName, stage, name);
      if (!plugin.descriptor.pure) throw new Error(`pipeline '${pipelineName}': plugin '${name}' is not pure, so it cannot run in a worker.`);
      if (!plugin.source) throw new Error(`pipeline '${pipelineName}': plugin '${name}' was registered without a module source, so a worker cannot load it.`);
      return { plugin: plugin.source, name, export: member, options: plugin.options };
    });
  }

  #threadCall(pipelineName: string, stage: StageSpec): StageFn {
    if (stage.run) return stage.run;
    const links = [stage.uses!].flat().map(({ plugin: name, export: member }) => {
      const plugin = this.#plugin(pipelineName, stage, name);
      if (typeof (plugin.instance as unknown as Record<string, unknown>)[member] !== 'function') throw new Error(`pipeline '${pipelineName}': plugin '${name}' has no function '${member}'.`);
      return { name, instance: plugin.instance, export: member };
    });
    return (batch, ctx) => runChain(links, batch, ctx.context);
  }
}
