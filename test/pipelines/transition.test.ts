import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createKernel } from '../../kernel/kernel.js';
import type { PipelineProgress } from '../../kernel/pipeline.js';
import { newPseudonymKey } from '../../kernel/scrub/pseudonym.js';
import { combineTemplates } from '../../pipelines/extract.js';
import { libraryEntries } from '../../pipelines/promote.js';
import type { Endpoint } from '../../pipelines/extract.js';
import { TRANSITION_BATCH_BYTES, transitionPipeline } from '../../pipelines/transition.js';
import { BUILTIN_PLUGIN_MODULES } from '../../plugins/index.js';
import { trafficRecord } from '../helpers/traffic.js';

describe('transition stages', () => {
  it('combines template opinions: any extractor may add a parameter; a template that does not fit is ignored', () => {
    const warnings: string[] = [];
    const warn = (t: string) => warnings.push(t);
    assert.equal(combineTemplates('/v1/reports/2024-01-05/c1', ['/v1/reports/2024-01-05/{report_id}', '/v1/reports/{date}/c1', null], warn), '/v1/reports/{date}/{report_id}');
    assert.equal(combineTemplates('/a/b', ['/a/{x}/c', '/z/{y}'], warn), '/a/b');
    assert.equal(warnings.length, 2);
  });

  it('promotes one entry per request, the latest answer winning, matching on the query a client repeats', () => {
    const record = (at: string, uri: string, status: number, findings: string[] = []) => ({ ...trafficRecord({ uri, status, recorded_at: at, response: { headers: { 'content-length': '2', 'x-a': '1' }, body: 'ok' } }), uri_template: '/items/{item_id}', scrub_findings: findings.map((path) => ({ path, rule: 'email' })) });
    const endpoint: Endpoint = {
      patterns: { method: 'GET', uri_template: '/items/{item_id}', samples: 3, query: { ts: { required: true, type: 'integer', distinct: 3, volatile: true } }, request_schema: null, response_schemas: {} },
      records: [record('2024-01-02', '/items/1?ts=2&view=full&email=x', 500, ['request.query.email']), record('2024-01-01', '/items/1?view=full&ts=1', 200), record('2024-01-03', '/items/2?ts=3', 200)],
    };
    const entries = libraryEntries({ id: 'svc_1', upstream_url: 'http://up' }, [endpoint]);
    assert.deepEqual(entries.map((e) => [e.path, e.query, e.response.status]), [
      ['/items/1', { view: ['full'] }, 500],
      ['/items/2', null, 200],
    ]);
    assert.deepEqual(entries[0]!.response.headers, { 'x-a': '1' });
    assert.ok(entries.every((e) => e.scrubbed && e.source === 'recorded' && e.origin!.startsWith('traffic:tr_') && e.uri_template === '/items/{item_id}'));
  });

  it('marks an entry not scrubbed when its record has a body the scrubbers could not read', () => {
    const record = (uri: string, rules: string[]) => ({ ...trafficRecord({ uri, response: { body: { b64: 'AAEC' } } }), uri_template: uri, scrub_findings: rules.map((rule) => ({ path: 'response.body', rule })) });
    const endpoint: Endpoint = {
      patterns: { method: 'GET', uri_template: '/files', samples: 2, query: {}, request_schema: null, response_schemas: {} },
      // 'unscrubbable_body' is kernel/contracts/scrubber.ts UNSCRUBBABLE.
      records: [record('/files/1', ['unscrubbable_body']), record('/files/2', ['email'])],
    };
    const entries = libraryEntries({ id: 'svc_1', upstream_url: 'http://up' }, [endpoint]);
    assert.deepEqual(entries.map((e) => [e.path, e.scrubbed]), [
      ['/files/1', false],
      ['/files/2', true],
    ]);
  });

  it('sends multi-megabyte bodies to the workers in batches bounded by bytes', async () => {
    const kernel = await createKernel({ builtins: BUILTIN_PLUGIN_MODULES, workers: 2 });
    try {
      const mb = 12;
      const body = 'lorem ipsum dolor sit amet '.repeat(Math.ceil((mb << 20) / 27)).slice(0, mb << 20);
      const records = Array.from({ length: 5 }, (_, i) => trafficRecord({ uri: `/v1/blobs/${i}`, response: { headers: { 'content-type': 'text/plain' }, body } }));
      const progress: PipelineProgress[] = [];
      let promoted = 0;
      const pipeline = transitionPipeline(kernel.plugins, (endpoints) => ((promoted = endpoints.reduce((n, e) => n + e.records.length, 0)), endpoints));
      await kernel.pipelines.run(pipeline, records, { context: { tenantKey: newPseudonymKey(), rules: { disable: [], keys: {}, patterns: {} } }, onProgress: (p) => progress.push(p) });
      assert.equal(promoted, 5);
      const perBatch = Math.floor(TRANSITION_BATCH_BYTES / (mb << 20));
      const steps = progress.filter((p) => p.stage === 'scrub' && p.processed > 0).map((p) => p.processed);
      assert.equal(steps.length, Math.ceil(5 / perBatch), `batches of ${perBatch} records of ${mb} MiB: ${steps.join(', ')}`);
    } finally {
      await kernel.close();
    }
  });
});
