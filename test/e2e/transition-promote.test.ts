import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { MockInput } from '../../adapters/store/repositories/mocks.js';
import { TransitionRunner } from '../../pipelines/transition-runner.js';
import { holdNextBatch } from '../fixtures/plugins/gate-extractor.js';
import { startHarness, type Harness } from '../helpers/harness.js';
import { waitForJobEnd } from '../helpers/jobs.js';
import { trafficRecord } from '../helpers/traffic.js';

const GATE = new URL('../fixtures/plugins/gate-extractor.js', import.meta.url).pathname;

/** An entry as an import (HAR, OpenAPI, Postman) would make it. */
const imported = (serviceId: string, path: string, status: number): MockInput => ({
  service_id: serviceId,
  service_upstream_id: 'http://127.0.0.1:9',
  method: 'GET',
  path,
  query: null,
  body_matcher: null,
  response: { status, headers: {}, body: '{}' },
  source: 'har',
  scrubbed: true,
});

describe('transition promote', () => {
  let h: Harness;
  let serviceId: string;
  const at = (minute: number) => new Date(Date.UTC(2024, 0, 1, 0, minute)).toISOString();
  const transition = async (id = serviceId) => waitForJobEnd(h, String((await h.call('POST', '/v1/transition/start', { body: { service_id: id } })).body.job_id));
  const entriesOf = async (id: string) => (await h.runtime.cradle.mocks.all('default')).filter((e) => e.service_id === id);

  before(async () => {
    h = await startHarness({ env: { SERVICE_PLUGINS: GATE } });
    serviceId = String((await h.call('POST', '/services', { body: { name: 'api', upstream_url: 'http://127.0.0.1:9', routing_type: 'path_prefix', routing_value: '/api' } })).body.id);
    await h.runtime.cradle.agentData.importTraffic('default', [1, 2, 3].map((n) => trafficRecord({ service_id: serviceId, uri: `/v1/items/${n}`, recorded_at: at(n), response: { body: { id: n } } })));
  });
  beforeEach(async () => {
    await h.call('POST', '/v1/mode', { body: { mode: 'learn' } });
  });
  after(() => h.close());

  /** Starts a job held by the gate in a runner of its own that renews no lease (heartbeat far off). */
  async function heldRun(leaseMs: number): Promise<{ jobId: string; runner: TransitionRunner; open: () => void }> {
    await h.runtime.cradle.transitions.stop();
    const gate = holdNextBatch();
    const jobId = String((await h.call('POST', '/v1/transition/start', { body: { service_id: serviceId } })).body.job_id);
    const runner = new TransitionRunner(h.runtime.cradle, { leaseMs, heartbeatMs: 600_000, pollMs: 50 });
    runner.start();
    await gate.reached;
    return { jobId, runner, open: gate.open };
  }

  async function logged(jobId: string, texts: readonly string[]): Promise<void> {
    for (let i = 0; i < 400; i++) {
      if (h.logs.some((l) => l.includes(jobId) && texts.some((t) => l.includes(t)))) return;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`nothing logged for ${jobId}`);
  }

  it('a runner whose lease was taken over before promote writes nothing', async () => {
    const { jobId, runner, open } = await heldRun(100);
    try {
      await new Promise((r) => setTimeout(r, 150));
      const taker = await h.runtime.cradle.transitionJobs.claim('default', 'taker', 600_000, 3);
      assert.equal(taker?.job_id, jobId);
      open();
      await logged(jobId, ['transition handed back', 'transition finished after its lease was lost']);
      assert.equal((await entriesOf(serviceId)).length, 0, 'no library entry from the runner that lost the job');
      assert.equal((await h.runtime.cradle.endpointPatterns.ofService('default', serviceId)).length, 0);
      assert.equal((await h.call('GET', `/v1/transition/${jobId}/status`)).body.status, 'running', 'the job is the taker’s');
      assert.equal((await h.call('GET', '/v1/mode')).body.mode, 'TRANSITIONING');
    } finally {
      await h.runtime.cradle.transitionJobs.finish('default', jobId, 'taker', { status: 'failed', error: 'ended by the test' });
      await runner.stop();
      h.runtime.cradle.transitions.start();
    }
  });

  it('a cancel asked for before promote commits ends the job cancelled, nothing written, the mode back', async () => {
    const { jobId, runner, open } = await heldRun(600_000);
    try {
      const asked = await h.call('POST', `/v1/transition/${jobId}/cancel`);
      assert.equal(asked.body.status, 'running', 'asked; the runner has not seen it (no heartbeat yet)');
      open();
      const job = await waitForJobEnd(h, jobId);
      assert.equal(job.status, 'cancelled', JSON.stringify(job));
      assert.equal((await entriesOf(serviceId)).length, 0);
      assert.equal((await h.call('GET', '/v1/mode')).body.mode, 'LEARN');
    } finally {
      await runner.stop();
      h.runtime.cradle.transitions.start();
    }
  });

  it('a request recorded again with another status loses its stale recorded answer; imported answers stay', async () => {
    const first = await transition();
    assert.equal(first.status, 'succeeded', String(first.error));
    await h.runtime.cradle.mocks.upsertMany('default', [imported(serviceId, '/v1/items/2', 202)]);
    await h.call('POST', '/v1/mode', { body: { mode: 'learn' } });
    await h.runtime.cradle.agentData.importTraffic('default', [1, 2].map((n) => trafficRecord({ service_id: serviceId, uri: `/v1/items/${n}`, status: 404, recorded_at: at(10 + n), response: { body: { error: 'gone' } } })));

    const second = await transition();
    assert.equal(second.status, 'succeeded', String(second.error));
    assert.deepEqual((second.result as { entries_deleted: unknown }).entries_deleted, { superseded: 2, of_deleted_services: 0 });
    const answers = (await entriesOf(serviceId)).map((e) => `${e.path} ${e.response.status} ${e.source}`).sort();
    assert.deepEqual(answers, ['/v1/items/1 404 recorded', '/v1/items/2 202 har', '/v1/items/2 404 recorded', '/v1/items/3 200 recorded']);
    const res = await fetch(`${h.agentUrl}/api/v1/items/1`);
    assert.equal(res.status, 404, await res.text());
  });

  it('deletes the entries of services deleted since, at the next transition (SPEC: they stay until then)', async () => {
    const gone = String((await h.call('POST', '/services', { body: { name: 'old', upstream_url: 'http://127.0.0.1:9', routing_type: 'path_prefix', routing_value: '/old' } })).body.id);
    await h.runtime.cradle.mocks.upsertMany('default', [imported(gone, '/a', 200), imported(gone, '/b', 200)]);
    assert.equal((await h.call('DELETE', `/services/${gone}`)).status, 204);
    assert.equal((await entriesOf(gone)).length, 2, 'they stay when the service goes');

    const job = await transition();
    assert.equal(job.status, 'succeeded', String(job.error));
    assert.equal((job.result as { entries_deleted: { of_deleted_services: number } }).entries_deleted.of_deleted_services, 2);
    assert.equal((await entriesOf(gone)).length, 0);
    assert.ok((await entriesOf(serviceId)).length > 0, 'the entries of services that exist stay');
  });

  it('fails a transition with no usable traffic: the mode goes back and learned patterns stay', async () => {
    const empty = String((await h.call('POST', '/services', { body: { name: 'empty', upstream_url: 'http://127.0.0.1:9', routing_type: 'path_prefix', routing_value: '/empty' } })).body.id);
    await h.runtime.cradle.agentData.importTraffic('default', [trafficRecord({ service_id: empty, uri: '/v1/x', response: null })]);
    const learned = { method: 'GET', uri_template: '/v1/x', samples: 3, query: {}, request_schema: null, response_schemas: {} };
    await h.runtime.cradle.endpointPatterns.replace('default', empty, [learned]);

    const job = await transition(empty);
    assert.equal(job.status, 'failed');
    assert.equal(job.error, `no recorded traffic with a response for service ${empty} (left out: 1 without a response); record some in LEARN first`);
    assert.equal((await h.call('GET', '/v1/mode')).body.mode, 'LEARN');
    const norm = await h.call('POST', '/v1/traffic/normalize', { body: { service_id: empty } });
    assert.equal(norm.status, 200, norm.text);
    assert.equal((await h.runtime.cradle.endpointPatterns.ofService('default', empty)).length, 1, 'nothing new wipes nothing');
  });
});
