/**
 * `npm run bench`: measures, in one run, and writes docs/benchmarks.md.
 *   1. Authenticated `GET /services` on the control plane against a bare Koa route answering the
 *      same JSON (target ≥ 60 %). Each server runs alone, pinned to CPU 0; the load generator
 *      (autocannon) is pinned to CPU 1.
 *   2. p50/p99 of a tenant-scoped query (a transaction that sets the app role and `app.tenant`,
 *      then reads the services under RLS) on PGlite and on PostgreSQL, each against the same read
 *      done without the tenant transaction.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import autocannon from 'autocannon';
import { Store } from '../../adapters/store/connection.js';
import { ServicesRepo } from '../../adapters/store/repositories/services.js';
import { ChangeFeed } from '../../adapters/store/repositories/change-versions.js';

const DURATION_S = Number(process.env.BENCH_DURATION ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SERVER = new URL('./platform-server.js', import.meta.url).pathname;
const DOC = new URL('../../../docs/benchmarks.md', import.meta.url);
const hasTaskset = spawnSync('taskset', ['-V']).status === 0;

if (hasTaskset) spawnSync('taskset', ['-cp', '1', String(process.pid)]);

function start(kind: string, extra: string[] = []): Promise<{ child: ChildProcess; port: number; key: string }> {
  const cmd = hasTaskset ? 'taskset' : process.execPath;
  const args = hasTaskset ? ['-c', '0', process.execPath, SERVER, kind, ...extra] : [SERVER, kind, ...extra];
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.stdout!.once('data', (d: Buffer) => resolve({ child, ...(JSON.parse(d.toString()) as { port: number; key: string }) }));
    child.once('exit', (code) => reject(new Error(`${kind} server exited ${code}`)));
  });
}

/** CPU seconds a process has used (user + system), from /proc; NaN where there is no /proc. */
function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

async function load(url: string, headers: Record<string, string>, seconds: number, pid: number) {
  const cpuBefore = cpuSeconds(pid);
  const started = performance.now();
  const r = await autocannon({ url, connections: 32, duration: seconds, headers });
  const cpu = (cpuSeconds(pid) - cpuBefore) / ((performance.now() - started) / 1000);
  if (r.non2xx || r.errors) throw new Error(`${url}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, cpu };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

async function httpBench() {
  const ours = await start('understudy');
  const sample = await (await fetch(`http://127.0.0.1:${ours.port}/services`, { headers: { 'X-Service-Api-Key': ours.key } })).text();
  const bare = await start('bare', [sample]);
  const headers = { 'X-Service-Api-Key': ours.key };
  const runs = { ours: [] as number[], bare: [] as number[], oursP99: [] as number[], bareP99: [] as number[], oursCpu: [] as number[], bareCpu: [] as number[] };
  const oursUrl = `http://127.0.0.1:${ours.port}/services`;
  const bareUrl = `http://127.0.0.1:${bare.port}/services`;
  try {
    await load(oursUrl, headers, 2, ours.child.pid!);
    await load(bareUrl, {}, 2, bare.child.pid!);
    for (let i = 0; i < ROUNDS; i++) {
      const a = await load(oursUrl, headers, DURATION_S, ours.child.pid!);
      const b = await load(bareUrl, {}, DURATION_S, bare.child.pid!);
      runs.ours.push(a.rps);
      runs.oursP99.push(a.p99);
      runs.oursCpu.push(a.cpu);
      runs.bare.push(b.rps);
      runs.bareP99.push(b.p99);
      runs.bareCpu.push(b.cpu);
    }
  } finally {
    ours.child.kill();
    bare.child.kill();
  }
  return runs;
}

async function queryBench(label: string, opts: ConstructorParameters<typeof Object>[0]) {
  const store = Store.open(opts as Parameters<typeof Store.open>[0]);
  try {
    await store.migrate();
    const repo = new ServicesRepo(store, new ChangeFeed(store));
    for (const n of [1, 2, 3, 4, 5]) await repo.create('bench', { name: `s${n}`, upstream_url: 'http://x.test', routing_type: 'hostname', routing_value: `h${n}-${Date.now()}.test`, mode_override: null });
    await repo.create('other', { name: 'o', upstream_url: 'http://x.test', routing_type: 'hostname', routing_value: `o-${Date.now()}.test`, mode_override: null });
    const time = async (fn: () => Promise<unknown>, n: number) => {
      const out: number[] = [];
      for (let i = 0; i < n; i++) {
        const t = performance.now();
        await fn();
        out.push(performance.now() - t);
      }
      return out;
    };
    const scoped = () => repo.all('bench');
    const plain = () => store.knex('services').where({ tenant: 'bench' }).select('id', 'name', 'upstream_url', 'routing_type', 'routing_value', 'mode_override', 'created_at', 'updated_at');
    await time(scoped, 300);
    await time(plain, 300);
    const s = await time(scoped, 3000);
    const p = await time(plain, 3000);
    return { label, scoped: { p50: pct(s, 50), p99: pct(s, 99) }, plain: { p50: pct(p, 50), p99: pct(p, 99) } };
  } finally {
    if (store.schema !== 'public') await store.knex.raw('DROP SCHEMA IF EXISTS ?? CASCADE', [store.schema]);
    await store.close();
  }
}

async function pgReachable(url: string): Promise<boolean> {
  const store = Store.open({ databaseUrl: url });
  try {
    await store.ping(2000);
    return true;
  } catch {
    return false;
  } finally {
    await store.close();
  }
}

const http = await httpBench();
const queries = [await queryBench('PGlite (in memory)', { memory: true })];
const pgUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
if (await pgReachable(pgUrl)) queries.push(await queryBench('PostgreSQL 127.0.0.1', { databaseUrl: pgUrl, schema: `bench_${process.pid}` }));

const f = (n: number) => n.toLocaleString('en-US', { maximumFractionDigits: 0 });
const ms = (n: number) => n.toFixed(3);
const ratio = median(http.ours) / median(http.bare);
const section = `<!-- bench:platform:start -->
## Platform: control plane and tenant-scoped queries

Measured ${new Date().toISOString().slice(0, 10)} with \`npm run bench\` on ${cpus().length} × ${cpus()[0]?.model.trim()}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}${hasTaskset ? '; each server pinned to CPU 0, autocannon to CPU 1' : ''}.

### Authenticated \`GET /services\` against a bare Koa route (target ≥ 60 %)

autocannon, 32 connections, ${ROUNDS} runs of ${DURATION_S} s after a 2 s warm-up, the two servers alternating; median of the runs.
The bare route answers the same JSON (three services) with no auth, validation, rate limit or logging.

| server | req/s (median) | runs | p99 ms (median) | server CPU (median, 100 % = one core) |
|---|---:|---|---:|---:|
| understudy control plane | ${f(median(http.ours))} | ${http.ours.map(f).join(', ')} | ${median(http.oursP99)} | ${(median(http.oursCpu) * 100).toFixed(0)} % |
| bare Koa + @koa/router | ${f(median(http.bare))} | ${http.bare.map(f).join(', ')} | ${median(http.bareP99)} | ${(median(http.bareCpu) * 100).toFixed(0)} % |
| **ratio** | **${(ratio * 100).toFixed(1)} %** | | | |

### Tenant-scoped query latency

3,000 sequential reads of one tenant's services (5 rows; another tenant's row present) after 300 warm-up reads.
*Scoped* is what the application runs: a transaction that switches to the non-owner role, sets \`app.tenant\`,
and reads under row-level security. *Baseline* is the same SELECT with a \`where tenant = ?\` and no transaction.

| backend | scoped p50 ms | scoped p99 ms | baseline p50 ms | baseline p99 ms | p50 ratio |
|---|---:|---:|---:|---:|---:|
${queries.map((q) => `| ${q.label} | ${ms(q.scoped.p50)} | ${ms(q.scoped.p99)} | ${ms(q.plain.p50)} | ${ms(q.plain.p99)} | ${(q.scoped.p50 / q.plain.p50).toFixed(2)}× |`).join('\n')}
<!-- bench:platform:end -->`;

let doc: string;
try {
  doc = readFileSync(DOC, 'utf8');
} catch {
  doc = '# Benchmarks\n\nEvery figure here comes from `npm run bench` (test/bench/), with the machine and date it ran on.\nEach is a ratio against a baseline measured in the same run.\n\n';
}
const re = /<!-- bench:platform:start -->[\s\S]*<!-- bench:platform:end -->/;
writeFileSync(DOC, re.test(doc) ? doc.replace(re, section) : `${doc.trimEnd()}\n\n${section}\n`);
process.stdout.write(`${section}\n`);
process.exit(0);
