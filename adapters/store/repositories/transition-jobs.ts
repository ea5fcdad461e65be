import { AppError } from '../../../kernel/errors.js';
import { newId } from '../../../kernel/ids.js';
import type { Store, TenantTx } from '../connection.js';
import { isUniqueViolation, iso, isoOrNull, json, type Page } from './rows.js';
import type { TenantStateRepo } from './tenant-state.js';

/** DECISIONS "Modes and jobs": queued → running → succeeded | failed | cancelled. @public */
export const JOB_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** A transition job as the API shows it. @public */
export interface TransitionJob {
  job_id: string;
  service_id: string;
  status: JobStatus;
  /** 0..1 over the four stages. */
  progress: number;
  current_stage: string | null;
  records_processed: number;
  records_total: number;
  /** Why it failed or was cancelled; never quotes recorded data. */
  error: string | null;
  /** What a finished job did (entries created and updated, endpoints, findings per rule). */
  result: Record<string, unknown> | null;
  /**
   * Runs begun and not handed back: a runner that stopped mid-job leaves its lease to expire, and
   * the job runs again from scratch; one that shut down gracefully gave it back uncounted.
   */
  attempts: number;
  cancel_requested: boolean;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  updated_at: string;
}

/** `leaseMs` from now by the database's clock, the one {@link TransitionJobsRepo.claim} judges expiry by. */
function leaseEnd(trx: TenantTx, leaseMs: number) {
  return trx.raw("now() + ?::double precision * interval '1 millisecond'", [leaseMs]);
}

function toJob(r: Record<string, unknown>): TransitionJob {
  return {
    job_id: String(r.id),
    service_id: String(r.service_id),
    status: r.status as JobStatus,
    progress: Number(r.progress),
    current_stage: (r.current_stage as string | null) ?? null,
    records_processed: Number(r.records_processed),
    records_total: Number(r.records_total),
    error: (r.error as string | null) ?? null,
    result: json<Record<string, unknown> | null>(r.result) ?? null,
    attempts: Number(r.attempts),
    cancel_requested: Boolean(r.cancel_requested),
    created_at: iso(r.created_at),
    started_at: isoOrNull(r.started_at),
    finished_at: isoOrNull(r.finished_at),
    updated_at: iso(r.updated_at),
  };
}

/** How a run ended. */
export type JobOutcome = { status: 'succeeded'; result: Record<string, unknown> } | { status: 'failed' | 'cancelled'; error: string; result?: Record<string, unknown> };

/**
 * Transition jobs: rows claimed with `FOR UPDATE SKIP LOCKED` under a lease that the runner
 * renews, so several control planes share them and a runner that dies leaves a job that another
 * (or the same, restarted) takes up again once the lease expires. Starting and ending a job move
 * the tenant's mode in the same transaction.
 * @public
 */
export class TransitionJobsRepo {
  constructor(
    private readonly store: Store,
    private readonly state: TenantStateRepo,
  ) {}

  /** LEARN → TRANSITIONING and a queued job, atomically (see TenantStateRepo.enterTransition for the refusals). */
  async start(tenant: string, serviceId: string): Promise<TransitionJob> {
    try {
      return await this.store.withTenant(tenant, async (trx) => {
        await this.state.enterTransition(trx, tenant);
        const now = new Date();
        const [row] = await trx('transition_jobs').insert({ id: newId('job'), tenant, service_id: serviceId, status: 'queued', created_at: now, updated_at: now }).returning('*');
        return toJob(row as Record<string, unknown>);
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw new AppError('transitioning', 'a transition is already running; watch it with GET /v1/transition/jobs', { headers: { 'Retry-After': '5' } });
      throw err;
    }
  }

  async get(tenant: string, id: string): Promise<TransitionJob | null> {
    const row = await this.store.withTenant(tenant, (trx) => trx('transition_jobs').where({ id }).first());
    return row ? toJob(row as Record<string, unknown>) : null;
  }

  /** Newest first. */
  async page(tenant: string, limit: number, offset: number): Promise<Page<TransitionJob>> {
    return this.store.withTenant(tenant, async (trx) => {
      const [rows, [{ count }]] = await Promise.all([
        trx('transition_jobs').select('*').orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]).limit(limit).offset(offset),
        trx('transition_jobs').count({ count: '*' }),
      ]);
      return { data: rows.map(toJob), total: Number(count) };
    });
  }

  /**
   * Takes the oldest job that is queued, or running under an expired lease, for `owner` until
   * `leaseMs` from now by the database's clock (replicas' clocks may disagree; the one that
   * judges expiry decides). A job whose runners have stopped `maxAttempts` times is failed
   * instead, and one whose cancel was asked for is cancelled instead of run again (either way
   * the mode is restored). Null when there is nothing to run.
   */
  async claim(tenant: string, owner: string, leaseMs: number, maxAttempts: number): Promise<TransitionJob | null> {
    for (;;) {
      const outcome = await this.store.withTenant(tenant, async (trx) => {
        const row = (await trx('transition_jobs')
          .where((q) => q.where({ status: 'queued' }).orWhere((r) => r.where({ status: 'running' }).andWhere('lease_expires_at', '<', trx.fn.now())))
          .orderBy('created_at')
          .first()
          .forUpdate()
          .skipLocked()) as Record<string, unknown> | undefined;
        if (!row) return null;
        if (row.cancel_requested) {
          await this.#end(trx, tenant, String(row.id), { status: 'cancelled', error: 'cancelled by request (its runner stopped before it ended)' });
          return 'again' as const;
        }
        if (Number(row.attempts) >= maxAttempts) {
          await this.#end(trx, tenant, String(row.id), { status: 'failed', error: `the job's runner stopped ${maxAttempts} times before it finished (its lease expired each time); start a new transition` });
          return 'again' as const;
        }
        const now = new Date();
        const [claimed] = await trx('transition_jobs')
          .where({ id: row.id })
          .update({ status: 'running', lease_owner: owner, lease_expires_at: leaseEnd(trx, leaseMs), attempts: trx.raw('attempts + 1'), started_at: row.started_at ?? now, progress: 0, current_stage: null, records_processed: 0, updated_at: now })
          .returning('*');
        return toJob(claimed as Record<string, unknown>);
      });
      if (outcome !== 'again') return outcome;
    }
  }

  /** Renews `owner`'s lease; null when it lost the job, else whether a cancel was asked for. */
  async heartbeat(tenant: string, id: string, owner: string, leaseMs: number): Promise<{ cancel: boolean } | null> {
    const rows = (await this.store.withTenant(tenant, (trx) =>
      trx('transition_jobs').where({ id, lease_owner: owner, status: 'running' }).update({ lease_expires_at: leaseEnd(trx, leaseMs) }).returning(['cancel_requested']),
    )) as { cancel_requested: boolean }[];
    return rows.length ? { cancel: Boolean(rows[0]!.cancel_requested) } : null;
  }

  async progress(tenant: string, id: string, owner: string, fields: { progress: number; current_stage: string; records_processed: number; records_total: number }): Promise<void> {
    await this.store.withTenant(tenant, (trx) => trx('transition_jobs').where({ id, lease_owner: owner, status: 'running' }).update({ ...fields, updated_at: new Date() }));
  }

  /** Ends `owner`'s run of a job and moves the mode (MOCK on success, else back). False when the lease was lost. */
  async finish(tenant: string, id: string, owner: string, outcome: JobOutcome): Promise<boolean> {
    return this.store.withTenant(tenant, async (trx) => {
      if (!(await this.#lockOwned(trx, id, owner))) return false;
      await this.#end(trx, tenant, id, outcome);
      return true;
    });
  }

  /**
   * Ends `owner`'s run with what `commit` writes, in one transaction with the job row locked: so
   * `commit` writes (the library, the patterns) only while this runner holds the job, and its
   * writes, the job's end and the mode (MOCK on success) commit together or not at all. A runner
   * whose lease was taken over cannot write; a cancel asked for before the lock ends the job
   * `cancelled` without running `commit`; one asked for after it finds the job ended. Null when
   * the lease was lost (nothing written), else the outcome recorded.
   */
  async conclude(tenant: string, id: string, owner: string, commit: (trx: TenantTx) => Promise<JobOutcome>): Promise<JobOutcome | null> {
    return this.store.withTenant(tenant, async (trx) => {
      const row = await this.#lockOwned(trx, id, owner);
      if (!row) return null;
      const outcome: JobOutcome = row.cancel_requested ? { status: 'cancelled', error: 'cancelled by request' } : await commit(trx);
      await this.#end(trx, tenant, id, outcome);
      return outcome;
    });
  }

  /** Locks the job row while `owner` runs it; undefined when it does not (its lease was taken over, or the job ended). */
  async #lockOwned(trx: TenantTx, id: string, owner: string): Promise<{ cancel_requested: boolean } | undefined> {
    return (await trx('transition_jobs').where({ id, lease_owner: owner, status: 'running' }).forUpdate().first('cancel_requested')) as { cancel_requested: boolean } | undefined;
  }

  /**
   * Gives a job back without ending it (this runner is shutting down): queued again, at once
   * claimable by the next runner, which starts it from scratch. A run handed back is not an
   * attempt (its `attempts` is taken back), so rolling restarts never fail a job.
   */
  async release(tenant: string, id: string, owner: string): Promise<void> {
    await this.store.withTenant(tenant, (trx) =>
      trx('transition_jobs').where({ id, lease_owner: owner, status: 'running' }).update({ status: 'queued', lease_owner: null, lease_expires_at: null, attempts: trx.raw('greatest(attempts - 1, 0)'), updated_at: new Date() }),
    );
  }

  /** Asks a job to stop: a queued one is cancelled at once, a running one at its runner's next heartbeat. */
  async cancel(tenant: string, id: string): Promise<TransitionJob | null> {
    await this.store.withTenant(tenant, async (trx) => {
      const row = (await trx('transition_jobs').where({ id }).forUpdate().first('status')) as { status: JobStatus } | undefined;
      if (!row) return;
      if (row.status === 'queued') await this.#end(trx, tenant, id, { status: 'cancelled', error: 'cancelled before it started' });
      else if (row.status === 'running') await trx('transition_jobs').where({ id }).update({ cancel_requested: true, updated_at: new Date() });
      else throw new AppError('invalid_state', `job ${id} has already ${row.status}`);
    });
    return this.get(tenant, id);
  }

  async #end(trx: TenantTx, tenant: string, id: string, outcome: JobOutcome): Promise<void> {
    const now = new Date();
    const succeeded = outcome.status === 'succeeded';
    await trx('transition_jobs')
      .where({ id })
      .update({
        status: outcome.status,
        error: succeeded ? null : outcome.error,
        result: outcome.result ? JSON.stringify(outcome.result) : null,
        // A job that succeeded ran every stage: it reports the last one, with every record done.
        ...(succeeded && { progress: 1, current_stage: 'promote', records_processed: trx.raw('records_total') }),
        lease_owner: null,
        lease_expires_at: null,
        finished_at: now,
        updated_at: now,
      });
    await this.state.leaveTransition(trx, tenant, succeeded);
  }
}
