/**
 * Transition figures: URI templates inferred from traffic built on real OpenAPI descriptions
 * (F1 target ≥ 0.97), PII recall (≥ 99.5 %) and false positives (≤ 1 %) on a labelled faker
 * corpus, and scrub + normalize throughput (≥ 20,000 records/s) with 1 and 2 workers beside
 * the same batches through an identity stage.
 */
import { spawnSync } from 'node:child_process';
import { cpus } from 'node:os';
import { faker } from '@faker-js/faker';
import type { Scrubber, TemplateExtractor } from '../../kernel/contracts/index.js';
import { scrubWithAll } from '../../kernel/contracts/scrubber.js';
import type { TrafficRecord } from '../../kernel/domain/index.js';
import { createKernel } from '../../kernel/kernel.js';
import { definePipeline } from '../../kernel/pipeline.js';
import { newPseudonymKey } from '../../kernel/scrub/pseudonym.js';
import { BUILTIN_PLUGIN_MODULES } from '../../plugins/index.js';
import { fmt, hasTaskset, machine, median } from './lib.js';
import { DESCRIPTIONS, piiCorpus, templateTraffic } from './transition-corpus.js';

const IDENTITY = new URL('../fixtures/plugins/exit-scrubber.js', import.meta.url).pathname;
const CONTEXT = { tenantKey: newPseudonymKey(), rules: { disable: [], keys: {}, patterns: {} } };
const f = (x: number, d = 3) => x.toFixed(d);
/** Timed runs of normalize and extract after the scored one (the warm-up), median reported. */
const TIMED_RUNS = 5;

/** Template-set and per-segment precision, recall and F1 of inferred templates against the truth. */
function scores(inferred: readonly string[], truth: readonly string[]) {
  const norm = (t: string) => t.replace(/\{[^}]+\}/g, '{}');
  const want = new Set(truth.map(norm));
  const got = new Set(inferred.map(norm));
  const hit = [...got].filter((t) => want.has(t)).length;
  const p = hit / got.size;
  const r = hit / want.size;
  let tp = 0;
  let fp = 0;
  let fn = 0;
  inferred.forEach((t, i) => {
    const a = t.split('/');
    const b = truth[i]!.split('/');
    a.forEach((seg, j) => {
      const mine = seg.startsWith('{');
      const theirs = b[j]!.startsWith('{');
      if (mine && theirs) tp++;
      else if (mine) fp++;
      else if (theirs) fn++;
    });
  });
  const sp = tp / (tp + fp);
  const sr = tp / (tp + fn);
  return { templates: want.size, inferred: got.size, p, r, f1: (2 * p * r) / (p + r), sp, sr, sf1: (2 * sp * sr) / (sp + sr) };
}

export async function templatesSection(): Promise<string> {
  const kernel = await createKernel({ builtins: BUILTIN_PLUGIN_MODULES, workers: 1 });
  const extractor = kernel.plugins.get('extractor/uri-templates')!.instance as TemplateExtractor;
  const rows: string[] = [];
  for (const [name, file] of Object.entries(DESCRIPTIONS)) {
    const { records, truth } = templateTraffic(file, 10);
    const normalized = extractor.normalizeBatch!(records);
    const inferred = extractor.extract(normalized).map((t, i) => t ?? records[i]!.request.uri);
    const timed = (run: () => unknown) =>
      median(
        Array.from({ length: TIMED_RUNS }, () => {
          const started = performance.now();
          run();
          return performance.now() - started;
        }),
      );
    const s = scores(inferred, truth);
    rows.push(`| ${name} | ${s.templates} | ${fmt(records.length)} | ${s.inferred} | ${f(s.p)} | ${f(s.r)} | **${f(s.f1)}** | ${f(s.sp)} | ${f(s.sr)} | **${f(s.sf1)}** | ${fmt(timed(() => extractor.normalizeBatch!(records)))} | ${fmt(timed(() => extractor.extract(normalized)))} |`);
  }
  await kernel.close();
  return `### URI templates (target F1 ≥ 0.97)

Traffic: every path template of each description whose parameters are whole segments, 10 requests each, every
parameter a fresh synthetic value (integers, enum members, UUIDs for \`*_id\`, hex for shas, Stripe-style
\`cus_…\` ids for Stripe's names, usernames and slugs for GitHub's). Each request takes a method drawn from its
path's operations and is answered as that operation describes: its first 2xx status, and a sample of that
response's JSON schema (the importer's sampler) with each property dropped with probability 0.1, as real
responses differ in the optional fields they carry (an empty body when the operation has none). Templates
compare with parameter names ignored. *Templates* scores the set of distinct templates; *segments* scores each
path segment of each request as parameter or literal. *normalize* is the per-record work (segment shapes,
response key paths; in the worker pool in a transition), *extract* the inference over all of a service's
records, both on one thread: the median of ${TIMED_RUNS} runs after the scored one.

| description | templates | requests | inferred | templates P | R | F1 | segments P | R | F1 | normalize ms | extract ms |
|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|
${rows.join('\n')}`;
}

async function piiSection(): Promise<string> {
  const kernel = await createKernel({ builtins: BUILTIN_PLUGIN_MODULES, workers: 1 });
  const { records, fields } = piiCorpus(2000);
  const scrubbed = scrubWithAll(kernel.plugins.ofKind('scrubber').map((p) => p.instance as Scrubber), records, CONTEXT);
  await kernel.close();
  const bodies = scrubbed.map((r) => JSON.parse(String(r.response!.body)) as Record<string, unknown>);
  const byKind = new Map<string, { pii: boolean; total: number; changed: number }>();
  for (const { record, path, label, inText } of fields) {
    const after = path.reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], bodies[record]);
    const changed = inText ? !String(after).includes(label.value) : after !== label.value;
    const key = `${label.kind}${inText ? ' (in text)' : ''}`;
    const k = byKind.get(key) ?? byKind.set(key, { pii: label.pii, total: 0, changed: 0 }).get(key)!;
    k.total++;
    if (changed) k.changed++;
  }
  const sum = (pii: boolean) => [...byKind.values()].filter((k) => k.pii === pii).reduce((a, k) => ({ total: a.total + k.total, changed: a.changed + k.changed }), { total: 0, changed: 0 });
  const pos = sum(true);
  const neg = sum(false);
  const rows = [...byKind].sort(([a, x], [b, y]) => Number(y.pii) - Number(x.pii) || (a < b ? -1 : 1)).map(([kind, k]) => `| ${kind} | ${k.pii ? 'PII' : 'not PII'} | ${fmt(k.total)} | ${fmt(k.changed)} | ${f((100 * k.changed) / k.total, 2)} % |`);
  return `### PII (targets: recall ≥ 99.5 %, false positives ≤ 1 %)

A labelled corpus generated with @faker-js/faker (seeded): ${fmt(records.length)} order records, each a customer (names,
e-mail, phone in national, human and international styles, SSN, birth date, card number of a random network,
IBAN, IPv4 or IPv6, street address and postal code) beside fields that are not PII (ids, timestamps, currency,
user agent, URL, city, country, and a product: name, SKU, price, description, version, uuid, quantity,
status, company, commit sha, 13-digit barcode, four-part build number, epoch milliseconds, invoice
number), and a free-text note carrying an e-mail, an international phone number and a
card number. Every scrubber runs with default rules; a value counts as found when it is no longer there.

**Recall ${f((100 * pos.changed) / pos.total, 2)} %** (${fmt(pos.changed)} of ${fmt(pos.total)} PII values), **false positives ${f((100 * neg.changed) / neg.total, 2)} %** (${fmt(neg.changed)} of ${fmt(neg.total)} other values changed).

| kind | label | values | changed | rate |
|---|---|---:|---:|---:|
${rows.join('\n')}`;
}

/** Customer lookups as an app makes them: 2,000 customers, each looked up many times. */
function lookupTraffic(n: number): TrafficRecord[] {
  faker.seed(11);
  const people = Array.from({ length: 2000 }, () => ({ id: `cus_${faker.string.alphanumeric(14)}`, name: faker.person.fullName(), email: faker.internet.email(), phone: faker.phone.number(), address: { line1: faker.location.streetAddress(), city: faker.location.city(), postal_code: faker.location.zipCode() } }));
  return Array.from({ length: n }, (_, i) => {
    const c = people[i % people.length]!;
    const at = new Date(1.7e12 + i).toISOString();
    const body = JSON.stringify({ ...c, object: 'customer', created: 1_700_000_000 + i, balance: faker.number.int(100_000), currency: 'usd', metadata: { plan: faker.helpers.arrayElement(['gold', 'free']), note: faker.lorem.sentence() }, items: [{ sku: faker.string.alphanumeric(8), qty: 2 }] });
    return {
      id: `tr_${i}`,
      tenant: 'bench',
      service_id: 'svc_bench',
      recorded_at: at,
      mode: 'LEARN',
      request: { method: 'GET', uri: `/v1/customers/${c.id}?expand=invoice_settings&limit=10`, headers: { authorization: `Bearer sk_live_${faker.string.alphanumeric(24)}`, accept: 'application/json', 'user-agent': 'Stripe/v1 NodeBindings/17.0.0' }, body: '' },
      response: { status: 200, headers: { 'content-type': 'application/json', date: new Date(1.7e12 + i).toUTCString(), 'request-id': `req_${faker.string.alphanumeric(14)}` }, body },
      timings: { started_at: at, upstream_ms: 20, total_ms: 21 },
    } satisfies TrafficRecord;
  });
}

async function throughputSection(rounds: number): Promise<string> {
  const records = lookupTraffic(40_000);
  const bytes = Buffer.byteLength(JSON.stringify(records)) / records.length;
  const rows: string[] = [];
  for (const workers of [1, 2]) {
    const kernel = await createKernel({ builtins: BUILTIN_PLUGIN_MODULES, external: [IDENTITY], workers });
    const uses = (kind: 'scrubber' | 'extractor', member: string) => kernel.plugins.ofKind(kind).filter((p) => member in (p.instance as object) && p.descriptor.name !== 'fault/exit-scrubber').map((p) => ({ plugin: p.descriptor.name, export: member }));
    const real = definePipeline({ name: 'scrub+normalize', batchSize: 250, stages: [{ name: 'scrub', uses: uses('scrubber', 'scrubBatch'), worker: true }, { name: 'normalize', uses: uses('extractor', 'normalizeBatch'), worker: true }] });
    const identity = { plugin: 'fault/exit-scrubber', export: 'scrubBatch' };
    const base = definePipeline({ name: 'identity', batchSize: 250, stages: [{ name: 'scrub', uses: identity, worker: true }, { name: 'normalize', uses: identity, worker: true }] });
    const rate = async (p: typeof real, list: TrafficRecord[]) => {
      const started = performance.now();
      await kernel.pipelines.run(p, list, { context: CONTEXT });
      return list.length / ((performance.now() - started) / 1000);
    };
    await rate(real, records.slice(0, 5000));
    await rate(base, records.slice(0, 5000));
    const realRuns: number[] = [];
    const baseRuns: number[] = [];
    for (let i = 0; i < rounds; i++) {
      realRuns.push(await rate(real, records));
      baseRuns.push(await rate(base, records));
    }
    await kernel.close();
    rows.push(`| ${workers} | **${fmt(median(realRuns))}** | ${realRuns.map(fmt).join(', ')} | ${fmt(median(baseRuns))} | ${f(median(realRuns) / median(baseRuns), 2)} |`);
  }
  return `### Scrub + normalize throughput (target ≥ 20,000 records/s)

${fmt(records.length)} recorded customer lookups (2,000 customers; ${fmt(bytes)} bytes of JSON per record: a bearer token, a customer
with name, e-mail, phone and address), through the transition's scrub and normalize stages in the worker pool
(every built-in scrubber and extractor, batches of 250, one round trip per batch), ${rounds} runs after a warm-up,
median. The baseline sends the same batches through the same pool to an identity plugin: what moving the records
costs.

| workers | records/s | runs | identity records/s | vs identity |
|---:|---:|---|---:|---:|
${rows.join('\n')}`;
}

export async function transitionSection(rounds: number): Promise<string> {
  // Worker threads inherit this thread's CPUs; the other benchmarks pin it to one.
  if (hasTaskset) spawnSync('taskset', ['-cp', `0-${cpus().length - 1}`, String(process.pid)]);
  const parts = [await templatesSection(), await piiSection(), await throughputSection(rounds)];
  return `Measured ${new Date().toISOString().slice(0, 10)} with \`npm run bench\` on ${machine()}.

${parts.join('\n\n')}`;
}
