import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { Store } from '../../../adapters/store/connection.js';
import { ChangeFeed } from '../../../adapters/store/repositories/change-versions.js';
import { TenantStateRepo } from '../../../adapters/store/repositories/tenant-state.js';
import { TransitionJobsRepo } from '../../../adapters/store/repositories/transition-jobs.js';
import { testStoreOptions } from '../../helpers/harness.js';

const backend = process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite';
const TENANT = 'default';

/**
 * Runs `fn` as on a replica whose clock is `lagMs` behind the database's. PostgreSQL has its own
 * clock, so this process's Date is moved back. PGlite's clock is this process's `Date.now()`, so
 * there only `new Date()` (what application code stamps rows with) is moved back.
 */
async function withLaggingClock<T>(store: Store, lagMs: number, fn: () => Promise<T>): Promise<T> {
  const Real = globalThis.Date;
  const dbHasOwnClock = store.dialect === 'postgres';
  class Lagging extends Real {
    constructor(...args: [] | [string | number | Date]) {
      if (args.length) super(args[0]);
      else super(Real.now() - lagMs);
    }

    static override now(): number {
      return dbHasOwnClock ? Real.now() - lagMs : Real.now();
    }
  }
  globalThis.Date = Lagging as DateConstructor;
  try {
    return await fn();
  } finally {
    globalThis.Date = Real;
  }
}

describe(`transition job leases on ${backend}`, () => {
  const opts = testStoreOptions();
  let store: Store;
  let jobs: TransitionJobsRepo;
  let state: TenantStateRepo;
  before(async () => {
    store = Store.open(opts);
    await store.migrate();
    state = new TenantStateRepo(store, new ChangeFeed(store));
    jobs = new TransitionJobsRepo(store, state);
  });
  beforeEach(async () => {
    await store.withTenant(TENANT, (trx) => trx('transition_jobs').delete());
    await state.setMode(TENANT, 'LEARN');
  });
  after(async () => {
    await store.close();
    await opts.cleanup();
  });

  it('times leases by the database clock: a runner whose clock lags a minute neither writes an expired lease nor renews to one', async () => {
    const job = await jobs.start(TENANT, 'svc_a');
    const claimed = await withLaggingClock(store, 60_000, () => jobs.claim(TENANT, 'lagging', 30_000, 3));
    assert.equal(claimed?.job_id, job.job_id);
    assert.equal(await jobs.claim(TENANT, 'punctual', 30_000, 3), null, 'a healthy job is not taken over');
    assert.deepEqual(await withLaggingClock(store, 60_000, () => jobs.heartbeat(TENANT, job.job_id, 'lagging', 30_000)), { cancel: false });
    assert.equal(await jobs.claim(TENANT, 'punctual', 30_000, 3), null, 'nor after a heartbeat');
    const [row] = await store.withTenant(TENANT, (trx) => trx('transition_jobs').where({ id: job.job_id }).select(trx.raw('extract(epoch from lease_expires_at - now()) AS left')));
    assert.ok(Number((row as { left: unknown }).left) > 25, `the lease runs about 30 s from the database's now (${String((row as { left: unknown }).left)})`);
  });

  it('does not count a run handed back at shutdown as an attempt: rolling restarts never fail a job', async () => {
    const job = await jobs.start(TENANT, 'svc_a');
    for (let i = 0; i < 4; i++) {
      const run = await jobs.claim(TENANT, `replica-${i}`, 30_000, 3);
      assert.equal(run?.job_id, job.job_id, `restart ${i}`);
      assert.equal(run?.attempts, 1);
      await jobs.release(TENANT, job.job_id, `replica-${i}`);
    }
    const queued = await jobs.get(TENANT, job.job_id);
    assert.deepEqual([queued?.status, queued?.attempts], ['queued', 0]);
    // A runner that dies (its lease expires) still counts.
    assert.ok(await jobs.claim(TENANT, 'dies', 1, 2));
    await new Promise((r) => setTimeout(r, 20));
    assert.equal((await jobs.claim(TENANT, 'next', 30_000, 2))?.attempts, 2);
  });

  it('ends a job whose cancel was asked for when it is claimed again, instead of running it from scratch', async () => {
    const job = await jobs.start(TENANT, 'svc_a');
    assert.ok(await jobs.claim(TENANT, 'dies', 1, 3));
    assert.equal((await jobs.cancel(TENANT, job.job_id))?.status, 'running', 'a running job is asked to stop');
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(await jobs.claim(TENANT, 'next', 30_000, 3), null);
    const ended = await jobs.get(TENANT, job.job_id);
    assert.equal(ended?.status, 'cancelled');
    assert.match(String(ended?.error), /cancelled by request/);
    assert.equal((await state.mode(TENANT)).mode, 'LEARN');
  });

  it('concludes a run only while its runner holds the job: a taken-over runner writes nothing, a cancel before the lock wins', async () => {
    const job = await jobs.start(TENANT, 'svc_a');
    assert.ok(await jobs.claim(TENANT, 'slow', 1, 3));
    await new Promise((r) => setTimeout(r, 20));
    assert.ok(await jobs.claim(TENANT, 'taker', 30_000, 3));
    let wrote = 0;
    const commit = async () => {
      wrote++;
      return { status: 'succeeded' as const, result: {} };
    };
    assert.equal(await jobs.conclude(TENANT, job.job_id, 'slow', commit), null);
    assert.equal(wrote, 0);

    await jobs.cancel(TENANT, job.job_id);
    assert.deepEqual(await jobs.conclude(TENANT, job.job_id, 'taker', commit), { status: 'cancelled', error: 'cancelled by request' });
    assert.equal(wrote, 0);
    assert.equal((await state.mode(TENANT)).mode, 'LEARN');

    const next = await jobs.start(TENANT, 'svc_a');
    assert.ok(await jobs.claim(TENANT, 'runner', 30_000, 3));
    assert.equal((await jobs.conclude(TENANT, next.job_id, 'runner', commit))?.status, 'succeeded');
    assert.equal(wrote, 1);
    assert.equal((await jobs.get(TENANT, next.job_id))?.status, 'succeeded');
    assert.equal((await state.mode(TENANT)).mode, 'MOCK', 'the mode moves in the same transaction');
  });
});
