import type { PluginRegistry } from '../kernel/plugin.js';
import { definePipeline, type PipelineSpec, type StageSpec } from '../kernel/pipeline.js';
import type { ExchangeRecord, Extractor } from '../kernel/public.js';
import { extractEndpoints, type Endpoint } from './extract.js';

/** Stages in order, as jobs report them in `current_stage`. */
export const TRANSITION_STAGES = ['scrub', 'normalize', 'extract', 'promote'] as const;

/**
 * Batches of the transition stop short of this many bytes of recorded bodies (as well as at 250
 * records): 250 bodies of 20 MiB encoded as one string for a worker would pass V8's string limit
 * (about 512 MB) and fail the job on every retry.
 */
export const TRANSITION_BATCH_BYTES = 32 * 1024 * 1024;

const bodyLength = (body: unknown): number => (typeof body === 'string' ? body.length : typeof (body as { b64?: unknown } | null)?.b64 === 'string' ? (body as { b64: string }).b64.length : 0);

/**
 * What a traffic record weighs in a batch: its bodies, URI and a little for the rest. Anything
 * else (an endpoint after extract) weighs the little.
 */
function recordBytes(item: unknown): number {
  const r = item as { request?: { uri?: unknown; body?: unknown }; response?: { body?: unknown } | null } | null;
  return 1024 + bodyLength(r?.request?.body) + bodyLength(r?.response?.body) + (typeof r?.request?.uri === 'string' ? r.request.uri.length : 0);
}

/** What receives the endpoints at the end: the library in the database, a file, or a reply. */
export type EndpointSink = (endpoints: Endpoint[]) => Promise<unknown[]> | unknown[];

/**
 * A stage that calls one export of each booted plugin of a kind, chained: in the worker pool
 * when every one of them is pure (and so can be loaded in a thread), else in this thread.
 */
function chainStage(plugins: PluginRegistry, name: string, kind: 'scrubber' | 'extractor', member: string, tags: Pick<StageSpec, 'input' | 'output'>): StageSpec {
  const using = plugins.ofKind(kind).filter((p) => typeof (p.instance as unknown as Record<string, unknown>)[member] === 'function');
  if (!using.length) return { name, run: (batch) => batch, ...tags };
  return { name, uses: using.map((p) => ({ plugin: p.descriptor.name, export: member })), worker: using.every((p) => p.descriptor.pure && p.source !== null), ...tags };
}

/**
 * Recorded traffic of one service into library endpoints: `scrub` (every scrubber, in the
 * worker pool, batch by batch) → `normalize` (every extractor's per-record step, in the pool)
 * → `extract` (every extractor across all the records at once) → `promote` (the sink, which
 * `commits`: a cancel no longer stops the run once it has begun). Run it with the scrub context
 * (`{tenantKey, rules}`) as the run's context.
 * @public
 */
export function transitionPipeline(plugins: PluginRegistry, promote: EndpointSink, name = 'transition'): Readonly<PipelineSpec> {
  const extractors = plugins.ofKind('extractor').map((p) => p.instance as Extractor);
  return definePipeline({
    name,
    batchSize: 250,
    batchBytes: TRANSITION_BATCH_BYTES,
    itemBytes: recordBytes,
    stages: [
      chainStage(plugins, 'scrub', 'scrubber', 'scrubBatch', { input: 'traffic', output: 'scrubbed' }),
      chainStage(plugins, 'normalize', 'extractor', 'normalizeBatch', { input: 'scrubbed', output: 'normalized' }),
      { name: 'extract', whole: true, input: 'normalized', output: 'endpoints', run: (records, ctx) => extractEndpoints(extractors, records as ExchangeRecord[], ctx) },
      { name: 'promote', whole: true, commits: true, input: 'endpoints', run: (endpoints) => promote(endpoints as Endpoint[]) },
    ],
  });
}
