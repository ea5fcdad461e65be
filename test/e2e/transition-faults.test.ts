import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { TransitionRunner } from '../../pipelines/transition-runner.js';
import { armFile, CRASH_ONCE_MARKER } from '../fixtures/plugins/exit-scrubber.js';
import { startHarness, type Harness } from '../helpers/harness.js';
import { waitForJobEnd as waitForEnd } from '../helpers/jobs.js';
import { trafficRecord } from '../helpers/traffic.js';

const EXIT = new URL('../fixtures/plugins/exit-scrubber.js', import.meta.url).pathname;

describe('transition faults', () => {
  let h: Harness;
  let serviceId: string;
  const crashName = `faults${process.pid}`;
  before(async () => {
    h = await startHarness({ env: { SERVICE_PLUGINS: EXIT, SERVICE_WORKERS: '2' } });
    serviceId = String((await h.call('POST', '/services', { body: { name: 'api', upstream_url: 'http://127.0.0.1:9', routing_type: 'path_prefix', routing_value: '/api' } })).body.id);
    // 1,200 recorded exchanges, one of which crashes its worker thread while the crash is armed.
    const records = Array.from({ length: 1200 }, (_, i) =>
      trafficRecord({ service_id: serviceId, uri: i === 700 ? `/v1/items/${CRASH_ONCE_MARKER}${crashName}` : `/v1/items/${1000 + i}`, response: { body: { id: 1000 + i, owner: `owner${i}@example.com` } } }),
    );
    await h.runtime.cradle.agentData.importTraffic('default', records);
  });
  after(() => h.close());

  it('a worker crashing mid-batch fails the job cleanly; a retry runs from scratch', async () => {
    writeFileSync(armFile(crashName), '');
    const first = await h.call('POST', '/v1/transition/start', { body: { service_id: serviceId } });
    assert.equal(first.status, 202);
    const failed = await waitForEnd(h, String(first.body.job_id));
    assert.equal(failed.status, 'failed');
    assert.equal(failed.current_stage, 'scrub');
    assert.match(String(failed.error), /stage 'scrub\+normalize'.*fault\/exit-scrubber.*a worker thread exited \(code 70\)/);
    assert.equal((await h.call('GET', '/v1/mode')).body.mode, 'LEARN');
    assert.equal((await h.runtime.cradle.mocks.all('default')).length, 0, 'nothing promoted');

    const retry = await h.call('POST', '/v1/transition/start', { body: { service_id: serviceId } });
    const done = await waitForEnd(h, String(retry.body.job_id));
    assert.equal(done.status, 'succeeded', String(done.error));
    assert.equal((done.result as { entries_created: number }).entries_created, 1200);
    assert.equal((await h.call('GET', '/v1/mode')).body.mode, 'MOCK');
  });

  it('a job whose runner died is taken up again when its lease expires, and runs from scratch without duplicates', async () => {
    await h.call('POST', '/v1/mode', { body: { mode: 'learn' } });
    await h.runtime.cradle.transitions.stop();
    const start = await h.call('POST', '/v1/transition/start', { body: { service_id: serviceId } });
    const jobId = String(start.body.job_id);
    // A control plane claims it, reports some progress, and dies: its lease is left to expire.
    const dead = await h.runtime.cradle.transitionJobs.claim('default', 'dead-runner', 200, 3);
    assert.equal(dead?.job_id, jobId);
    await h.runtime.cradle.transitionJobs.progress('default', jobId, 'dead-runner', { progress: 0.3, current_stage: 'normalize', records_processed: 400, records_total: 1200 });
    assert.equal((await h.call('GET', `/v1/transition/${jobId}/status`)).body.status, 'running');

    const runner = new TransitionRunner(h.runtime.cradle, { leaseMs: 1000, heartbeatMs: 200, pollMs: 100 });
    await new Promise((r) => setTimeout(r, 250));
    runner.start();
    try {
      const done = await waitForEnd(h, jobId);
      assert.equal(done.status, 'succeeded', String(done.error));
      assert.equal(done.attempts, 2);
      const result = done.result as { entries_created: number; entries_updated: number };
      assert.deepEqual([result.entries_created, result.entries_updated], [0, 1200]);
      assert.equal((await h.runtime.cradle.mocks.all('default')).length, 1200);
    } finally {
      await runner.stop();
      h.runtime.cradle.transitions.start();
    }
  });

  it('fails a job whose runners keep dying, and puts the mode back', async () => {
    await h.call('POST', '/v1/mode', { body: { mode: 'learn' } });
    await h.runtime.cradle.transitions.stop();
    try {
      const jobId = String((await h.call('POST', '/v1/transition/start', { body: { service_id: serviceId } })).body.job_id);
      const jobs = h.runtime.cradle.transitionJobs;
      for (let i = 0; i < 2; i++) {
        assert.ok(await jobs.claim('default', `dying-${i}`, 1, 2));
        await new Promise((r) => setTimeout(r, 10));
      }
      assert.equal(await jobs.claim('default', 'next', 1000, 2), null);
      const job = (await h.call('GET', `/v1/transition/${jobId}/status`)).body;
      assert.equal(job.status, 'failed');
      assert.match(String(job.error), /stopped 2 times/);
      assert.equal((await h.call('GET', '/v1/mode')).body.mode, 'LEARN');
    } finally {
      h.runtime.cradle.transitions.start();
    }
  });
});
