/**
 * Platform figures: authenticated `GET /services` on the control plane against a bare Koa route
 * answering the same JSON (target ≥ 60 %), and p50/p99 of a tenant-scoped query on PGlite and
 * PostgreSQL against the same read without the tenant transaction.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Store, type StoreOptions } from '../../adapters/store/connection.js';
import { ChangeFeed } from '../../adapters/store/repositories/change-versions.js';
import { ServicesRepo } from '../../adapters/store/repositories/services.js';
import { alternate, BENCH_PG_URL, fmt, generator, load, machine, median, pct, pgReachable, startServer } from './lib.js';

const SERVER = new URL('./platform-server.js', import.meta.url).pathname;

async function httpBench(rounds: number, seconds: number) {
  const ours = await startServer<{ port: number; key: string }>(SERVER, ['understudy']);
  const sample = await (await fetch(`http://127.0.0.1:${ours.port}/services`, { headers: { 'X-Service-Api-Key': ours.key } })).text();
  const bare = await startServer(SERVER, ['bare', sample]);
  try {
    const targets = {
      ours: () => load({ url: `http://127.0.0.1:${ours.port}/services`, pid: ours.child.pid!, seconds, connections: 32, headers: { 'X-Service-Api-Key': ours.key } }),
      bare: () => load({ url: `http://127.0.0.1:${bare.port}/services`, pid: bare.child.pid!, seconds, connections: 32 }),
    };
    await alternate(1, { ours: () => load({ url: `http://127.0.0.1:${ours.port}/services`, pid: ours.child.pid!, seconds: 2, headers: { 'X-Service-Api-Key': ours.key } }), bare: () => load({ url: `http://127.0.0.1:${bare.port}/services`, pid: bare.child.pid!, seconds: 2 }) });
    return await alternate(rounds, targets);
  } finally {
    ours.child.kill();
    bare.child.kill();
  }
}

async function queryBench(label: string, opts: StoreOptions) {
  const store = Store.open(opts);
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


/** Measures and returns the markdown section. */
export async function platformSection(rounds: number, seconds: number): Promise<string> {
  const http = await httpBench(rounds, seconds);
  const queries = [await queryBench('PGlite (in memory)', { memory: true })];
  if (await pgReachable(BENCH_PG_URL)) queries.push(await queryBench('PostgreSQL 127.0.0.1', { databaseUrl: BENCH_PG_URL, schema: `bench_${process.pid}` }));
  const rps = (k: string) => http[k]!.map((r) => r.rps);
  const ratio = median(rps('ours')) / median(rps('bare'));
  const ms = (n: number) => n.toFixed(3);
  const row = (name: string, k: string) => `| ${name} | ${fmt(median(rps(k)))} | ${rps(k).map(fmt).join(', ')} | ${median(http[k]!.map((r) => r.p99))} | ${(median(http[k]!.map((r) => r.cpu)) * 100).toFixed(0)} % |`;
  return `## Platform: control plane and tenant-scoped queries

Measured ${new Date().toISOString().slice(0, 10)} with \`npm run bench\` on ${machine()}.

### Authenticated \`GET /services\` against a bare Koa route (target ≥ 60 %)

${generator}, 32 connections, ${rounds} runs of ${seconds} s after a 2 s warm-up, the two servers alternating; median of the runs.
The bare route answers the same JSON (three services) with no auth, validation, rate limit or logging; the control plane runs with \`LOG_LEVEL=silent\`.

| server | req/s (median) | runs | p99 ms (median) | server CPU (median, 100 % = one core) |
|---|---:|---|---:|---:|
${row('understudy control plane', 'ours')}
${row('bare Koa + @koa/router', 'bare')}
| **ratio** | **${(ratio * 100).toFixed(1)} %** | | | |

### Tenant-scoped query latency

3,000 sequential reads of one tenant's services (5 rows; another tenant's row present) after 300 warm-up reads.
*Scoped* is what the application runs: a transaction that switches to the non-owner role, sets \`app.tenant\`,
and reads under row-level security. *Baseline* is the same SELECT with a \`where tenant = ?\` and no transaction.

| backend | scoped p50 ms | scoped p99 ms | baseline p50 ms | baseline p99 ms | p50 ratio |
|---|---:|---:|---:|---:|---:|
${queries.map((q) => `| ${q.label} | ${ms(q.scoped.p50)} | ${ms(q.scoped.p99)} | ${ms(q.plain.p50)} | ${ms(q.plain.p99)} | ${(q.scoped.p50 / q.plain.p50).toFixed(2)}× |`).join('\n')}`;
}

/**
 * Start-up: `understudy serve` on a fresh data directory (PGlite created, migrated, first key
 * minted) until `/health` answers, against a bare Koa server process started the same way.
 */
export async function startupSection(rounds: number): Promise<string> {
  const main = new URL('../../adapters/cli/main.js', import.meta.url).pathname;
  const time = async (args: string[], env: NodeJS.ProcessEnv, url: (out: string) => string | null) => {
    const started = performance.now();
    const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    try {
      for (;;) {
        const u = url(out);
        if (u && (await fetch(u).then((r) => r.ok, () => false))) return performance.now() - started;
        await new Promise((r) => setTimeout(r, 20));
      }
    } finally {
      child.kill();
    }
  };
  const ours: number[] = [];
  const bare: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const dir = mkdtempSync(path.join(tmpdir(), 'understudy-start-'));
    const env: NodeJS.ProcessEnv = { ...process.env, SERVICE_DATA_DIR: dir, PORT: '0', AGENT_PORT: '0' };
    delete env.DATABASE_URL;
    ours.push(await time([main, 'serve'], env, (out) => {
      const m = /"port":(\d+)[^\n]*control plane listening/.exec(out);
      return m ? `http://127.0.0.1:${m[1]}/health` : null;
    }));
    rmSync(dir, { recursive: true, force: true });
    bare.push(await time([SERVER, 'bare', '{}'], process.env, (out) => {
      const m = /"port":(\d+)/.exec(out);
      return m ? `http://127.0.0.1:${m[1]}/services` : null;
    }));
  }
  return `## Start-up

\`understudy serve\` on a fresh data directory (embedded PostgreSQL created and migrated, plugins booted, first API
key minted) until \`GET /health\` answers, against a bare Koa server process started the same way; ${rounds} runs, median.
The README promises that \`npm install && npm start\` serves within 15 s (\`npm start\` adds a no-op type-check, about 1 s).

| process | median s | runs (s) |
|---|---:|---|
| understudy serve, fresh data dir | ${(median(ours) / 1000).toFixed(1)} | ${ours.map((v) => (v / 1000).toFixed(1)).join(', ')} |
| bare Koa server | ${(median(bare) / 1000).toFixed(1)} | ${bare.map((v) => (v / 1000).toFixed(1)).join(', ')} |`;
}
