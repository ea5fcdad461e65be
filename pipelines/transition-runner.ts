import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { EndpointPatterns, ScrubContext } from '../kernel/contracts/index.js';
import type { Service, TrafficRecord } from '../kernel/domain/index.js';
import { AppError, isAppError } from '../kernel/errors.js';
import type { Kernel } from '../kernel/kernel.js';
import { PipelineCancelled, PipelineStageError, type PipelineProgress } from '../kernel/pipeline.js';
import type { Store } from '../adapters/store/connection.js';
import type { AgentDataRepo } from '../adapters/store/repositories/agent-data.js';
import type { EndpointPatternsRepo } from '../adapters/store/repositories/endpoint-patterns.js';
import type { MilestonesRepo } from '../adapters/store/repositories/milestones.js';
import type { MocksRepo } from '../adapters/store/repositories/mocks.js';
import type { ServicesRepo } from '../adapters/store/repositories/services.js';
import type { TenantConfigRepo } from '../adapters/store/repositories/tenant-config.js';
import type { TenantSecretsRepo } from '../adapters/store/repositories/tenant-secrets.js';
import type { JobOutcome, TransitionJob, TransitionJobsRepo } from '../adapters/store/repositories/transition-jobs.js';
import type { SyncLayer } from '../adapters/volume/sync.js';
import type { Endpoint } from './extract.js';
import { promoteEndpoints, type PromoteCounts } from './promote.js';
import { loadScrubContext } from './scrub-context.js';
import { TRANSITION_STAGES, transitionPipeline, type EndpointSink } from './transition.js';

/** What the runner takes from the container. */
export interface TransitionDeps {
  tenant: string;
  logger: Logger;
  store: Store;
  kernel: Kernel;
  sync: SyncLayer;
  services: ServicesRepo;
  agentData: AgentDataRepo;
  mocks: MocksRepo;
  endpointPatterns: EndpointPatternsRepo;
  tenantSecrets: TenantSecretsRepo;
  tenantConfig: TenantConfigRepo;
  transitionJobs: TransitionJobsRepo;
  milestones: MilestonesRepo;
}

/** Timing of claims and leases. */
export interface RunnerOptions {
  /** How long a claim lasts without a heartbeat. */
  leaseMs: number;
  heartbeatMs: number;
  /** How often to look for a job when not told of one. */
  pollMs: number;
  /** Runs begun (lease expiries included) before a job is failed. */
  maxAttempts: number;
}

const DEFAULTS: RunnerOptions = { leaseMs: 30_000, heartbeatMs: 5_000, pollMs: 1_000, maxAttempts: 3 };

/** Traffic a transition can use, and what it had to leave out. */
interface Prepared {
  service: Service;
  records: TrafficRecord[];
  skipped: { no_response: number; truncated: number };
  context: ScrubContext;
}

/**
 * Why a run failed, in words safe to store and log: our own errors say what happened; an error
 * thrown while handling records is named by its stage and type only, since its message may
 * quote the data (a JSON parse error quotes its input).
 */
function failureReason(err: unknown): string {
  if (err instanceof PipelineStageError) {
    const cause = err.cause as { message?: unknown; name?: unknown } | undefined;
    const text = typeof cause?.message === 'string' ? cause.message : '';
    const exit = /^worker exited with code: ?(-?\d+)/.exec(text);
    const why = exit ? `a worker thread exited (code ${exit[1]})` : isAppError(cause) ? text : `${String(cause?.name ?? 'Error')} (its message is not kept: it may quote recorded data)`;
    return `${err.message}: ${why}`;
  }
  if (isAppError(err)) return err.message;
  const e = err as { name?: unknown; code?: unknown };
  return `the transition failed: ${String(e?.name ?? 'Error')}${e?.code ? ` (${String(e.code)})` : ''}`;
}

/**
 * Runs transitions: claims queued jobs (or ones whose runner's lease expired), syncs the data
 * volume so every line recorded before the start is in, and runs the transition pipeline over
 * the service's traffic, reporting progress to the job row and renewing its lease. Promote
 * writes the library and patterns, ends the job and sets the mode (MOCK) in one transaction, and
 * only while this runner still holds the job (see TransitionJobsRepo.conclude); a failure or a
 * cancel before promote ends the job with its reason and puts the mode back. A service with no
 * usable traffic fails: it would switch to MOCK with nothing new.
 * @public
 */
export class TransitionRunner {
  readonly #opts: RunnerOptions;
  readonly #owner = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  #timer: NodeJS.Timeout | null = null;
  #busy: Promise<void> | null = null;
  #stopping: AbortController | null = null;
  #again = false;

  constructor(
    private readonly deps: TransitionDeps,
    opts: Partial<RunnerOptions> = {},
  ) {
    this.#opts = { ...DEFAULTS, ...opts };
  }

  /** Looks for work every `pollMs` (and at once when {@link notify} is called). */
  start(): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => this.notify(), this.#opts.pollMs);
    this.#timer.unref();
    this.notify();
  }

  /** A job may be waiting: look now (when started). */
  notify(): void {
    if (!this.#timer) return;
    if (this.#busy) {
      this.#again = true;
      return;
    }
    this.#busy = this.#drain().finally(() => {
      this.#busy = null;
      if (this.#again) {
        this.#again = false;
        this.notify();
      }
    });
  }

  /** Stops looking; a job in progress is given back (queued again) for the next runner. */
  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    this.#stopping?.abort();
    await this.#busy;
  }

  /** Scrub → normalize → extract over a service's traffic, patterns stored (POST /v1/traffic/normalize). */
  async normalize(serviceId: string): Promise<{ records: number; endpoints: EndpointPatterns[] }> {
    const prepared = await this.#prepare(serviceId);
    const { kernel, tenant, endpointPatterns } = this.deps;
    const save: EndpointSink = async (endpoints) => {
      // No traffic says nothing new: the patterns learned before stay.
      if (endpoints.length) await endpointPatterns.replace(tenant, serviceId, endpoints.map((e) => e.patterns));
      return endpoints.map((e) => e.patterns);
    };
    const out = await kernel.pipelines.run(transitionPipeline(kernel.plugins, save, 'normalize'), prepared.records, { context: prepared.context });
    return { records: prepared.records.length, endpoints: out.data as EndpointPatterns[] };
  }

  async #drain(): Promise<void> {
    const { tenant, transitionJobs, logger } = this.deps;
    for (;;) {
      let job: TransitionJob | null;
      try {
        job = await transitionJobs.claim(tenant, this.#owner, this.#opts.leaseMs, this.#opts.maxAttempts);
      } catch (err) {
        logger.warn({ err: (err as Error).message }, 'could not claim a transition job; retrying');
        return;
      }
      if (!job) return;
      await this.#run(job);
      if (!this.#timer) return;
    }
  }

  async #prepare(serviceId: string): Promise<Prepared> {
    const { tenant, sync, services, agentData } = this.deps;
    // Twice: a pass already under way may have begun before the last lines were written.
    await sync.runOnce();
    await sync.runOnce();
    const service = await services.get(tenant, serviceId);
    const skipped = { no_response: 0, truncated: 0 };
    const records = (await agentData.trafficOfService(tenant, serviceId)).filter((r) => {
      if (!r.response) skipped.no_response++;
      else if (r.response.body_truncated) skipped.truncated++;
      else return true;
      return false;
    });
    return { service, records, skipped, context: await loadScrubContext(this.deps, tenant, serviceId) };
  }

  async #run(job: TransitionJob): Promise<void> {
    const { tenant, transitionJobs, logger, kernel, milestones } = this.deps;
    const { leaseMs, heartbeatMs } = this.#opts;
    const controller = new AbortController();
    this.#stopping = controller;
    let stop: 'cancel' | 'lost' | null = null;
    const heartbeat = setInterval(() => {
      transitionJobs.heartbeat(tenant, job.job_id, this.#owner, leaseMs).then(
        (beat) => {
          if (!beat || beat.cancel) {
            stop = beat ? 'cancel' : 'lost';
            controller.abort();
          }
        },
        () => undefined, // the database is away: the lease runs on, or expires and the job runs again
      );
    }, heartbeatMs);
    const progress = progressWriter((p) => transitionJobs.progress(tenant, job.job_id, this.#owner, p));
    const log = logger.child({ job_id: job.job_id, service_id: job.service_id });
    // Set when promote ended the job in its own transaction (succeeded, or cancelled before it wrote).
    let concluded: JobOutcome | null = null;
    let outcome: JobOutcome;
    try {
      log.info({ attempt: job.attempts }, 'transition started');
      const prepared = await this.#prepare(job.service_id);
      const total = prepared.records.length;
      if (!total) throw new AppError('invalid_state', noTraffic(prepared));
      // The total is on the job row before any stage runs: throttled progress writes may lose the
      // race with promote's commit (they only touch a running job), and the job must still say it.
      progress.push({ progress: 0, current_stage: TRANSITION_STAGES[0], records_processed: 0, records_total: total });
      await progress.flush();
      const warnings: string[] = [];
      const promote: EndpointSink = async (endpoints: Endpoint[]) => {
        concluded = await transitionJobs.conclude(tenant, job.job_id, this.#owner, async (trx) => {
          const written = await promoteEndpoints(this.deps, trx, tenant, prepared.service, endpoints);
          return { status: 'succeeded', result: summary(endpoints, written, total, prepared.skipped, warnings) };
        });
        if (!concluded) throw new LeaseLost();
        return endpoints;
      };
      await kernel.pipelines.run(transitionPipeline(kernel.plugins, promote), prepared.records, {
        signal: controller.signal,
        context: prepared.context,
        onMessage: (m) => {
          if (m.level === 'warning') warnings.push(`${m.stage}: ${m.text}`);
        },
        onProgress: (p: PipelineProgress) => progress.push({ progress: p.progress, current_stage: p.stage, records_processed: p.total ? Math.round((total * p.processed) / p.total) : total, records_total: total }),
      });
      await progress.flush();
      outcome = concluded!;
    } catch (err) {
      await progress.flush();
      if (err instanceof PipelineStageError && err.cause instanceof LeaseLost) stop = 'lost';
      if (stop === 'lost' || (controller.signal.aborted && stop === null)) {
        // Another runner owns it now, or this one is shutting down: leave the job to them.
        if (stop === null) await transitionJobs.release(tenant, job.job_id, this.#owner).catch(() => undefined);
        log.warn({ reason: stop ?? 'shutdown' }, 'transition handed back');
        return;
      }
      outcome = err instanceof PipelineCancelled || stop === 'cancel' ? { status: 'cancelled', error: 'cancelled by request' } : { status: 'failed', error: failureReason(err) };
    } finally {
      clearInterval(heartbeat);
      this.#stopping = null;
    }
    try {
      if (!concluded && !(await transitionJobs.finish(tenant, job.job_id, this.#owner, outcome))) return log.warn('transition finished after its lease was lost; its outcome is dropped');
      if (outcome.status === 'succeeded') await milestones.reach(tenant, 'transition_run');
      if (outcome.status === 'succeeded') log.info(outcome.result, 'transition succeeded');
      else log.warn({ status: outcome.status, error: outcome.error }, 'transition did not succeed');
    } catch (err) {
      log.error({ err: failureReason(err) }, 'could not record the end of a transition; its lease will expire and it will run again');
    }
  }
}

/** Promote found that this runner no longer holds the job's lease: it wrote nothing. */
class LeaseLost extends Error {
  constructor() {
    super('the job\'s lease was taken over before promote');
    this.name = 'LeaseLost';
  }
}

/** Why a transition with nothing to promote fails (it would switch to MOCK with nothing new). */
function noTraffic(prepared: Prepared): string {
  const { no_response, truncated } = prepared.skipped;
  const left = [no_response && `${no_response} without a response`, truncated && `${truncated} with a truncated body`].filter(Boolean);
  return `no recorded traffic with a response for service ${prepared.service.id}${left.length ? ` (left out: ${left.join(', ')})` : ''}; record some in LEARN first`;
}

/** Job row updates from progress reports: the latest one, written at most every 250 ms and on each new stage. */
function progressWriter(write: (p: { progress: number; current_stage: string; records_processed: number; records_total: number }) => Promise<void>) {
  type P = Parameters<typeof write>[0];
  let latest: P | null = null;
  let stage = '';
  let at = 0;
  let writing: Promise<void> = Promise.resolve();
  const send = () => {
    const p = latest;
    latest = null;
    if (p) writing = writing.then(() => write(p)).catch(() => undefined);
  };
  return {
    push(p: P) {
      latest = p;
      if (p.current_stage !== stage || Date.now() - at >= 250) {
        stage = p.current_stage;
        at = Date.now();
        send();
      }
    },
    async flush() {
      send();
      await writing;
    },
  };
}

function summary(endpoints: readonly Endpoint[], written: PromoteCounts, records: number, skipped: Prepared['skipped'], warnings: readonly string[]): Record<string, unknown> {
  const findings: Record<string, number> = {};
  for (const e of endpoints) for (const r of e.records) for (const f of r.scrub_findings ?? []) findings[f.rule] = (findings[f.rule] ?? 0) + 1;
  return {
    entries_created: written.created,
    entries_updated: written.updated,
    entries_deleted: { superseded: written.superseded, of_deleted_services: written.of_deleted_services },
    endpoints: endpoints.length,
    templated_endpoints: endpoints.filter((e) => e.patterns.uri_template.includes('{')).length,
    records_used: records,
    records_skipped: skipped,
    findings,
    warnings,
  };
}
