/**
 * Agent figures: MOCK throughput with 10,000 entries against a bare node:http server returning
 * the same bytes (target ≥ 50 %, p99 ≤ 10 ms at 50 connections); matching cost with 100 and
 * 100,000 entries (within 10 %); LEARN's added p50 latency over calling the upstream directly
 * (≤ 1 ms); webhook captures per second (≥ 5,000) and the sync layer's import rate over them.
 */
import { readdirSync } from 'node:fs';
import { Agent, get } from 'node:http';
import path from 'node:path';
import { pino } from 'pino';
import { Store } from '../../adapters/store/connection.js';
import { AgentDataRepo } from '../../adapters/store/repositories/agent-data.js';
import { ChangeFeed } from '../../adapters/store/repositories/change-versions.js';
import { SyncLayer } from '../../adapters/volume/sync.js';
import { alternate, fmt, generator, load, machine, median, pct, startServer, type LoadResult } from './lib.js';

const SERVER = new URL('./agent-server.js', import.meta.url).pathname;
const HOST = { host: 'bench.test' };
const TARGET = '/v1/customers/cus_123';

const keepAlive = new Agent({ keepAlive: true, maxSockets: 1 });

/** Sequential GETs over one kept-alive connection (node:http, which lets a Host header through). */
async function latencies(url: string, headers: Record<string, string>, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    const status = await new Promise<number>((resolve, reject) => {
      get(url, { headers, agent: keepAlive }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      }).on('error', reject);
    });
    if (status !== 200) throw new Error(`${url}: ${status}`);
    out.push(performance.now() - t);
  }
  return out;
}

export async function agentSection(rounds: number, seconds: number): Promise<string> {
  const bare = await startServer(SERVER, ['bare']);
  const m10k = await startServer(SERVER, ['mock', '10000']);
  const m100 = await startServer(SERVER, ['mock', '100']);
  const m100k = await startServer(SERVER, ['mock', '100000']);
  const learn = await startServer(SERVER, ['learn', `http://127.0.0.1:${bare.port}`]);
  const hooks = await startServer<{ port: number; service: string; dataDir: string }>(SERVER, ['webhooks']);
  const all = [bare, m10k, m100, m100k, learn, hooks];
  try {
    const run = (s: { port: number; child: { pid?: number } }, headers: Record<string, string> = HOST) => () => load({ url: `http://127.0.0.1:${s.port}${TARGET}`, pid: s.child.pid!, seconds, connections: 50, headers });
    await alternate(1, { bare: run(bare, {}), m10k: run(m10k), m100: run(m100), m100k: run(m100k) });
    const mock = await alternate(rounds, { bare: run(bare, {}), m10k: run(m10k), m100: run(m100), m100k: run(m100k) });

    // LEARN: one request at a time, so the figure is added latency, not queueing.
    await latencies(`http://127.0.0.1:${bare.port}${TARGET}`, {}, 300);
    await latencies(`http://127.0.0.1:${learn.port}${TARGET}`, HOST, 300);
    const direct: number[] = [];
    const through: number[] = [];
    for (let i = 0; i < 5; i++) {
      direct.push(...(await latencies(`http://127.0.0.1:${bare.port}${TARGET}`, {}, 400)));
      through.push(...(await latencies(`http://127.0.0.1:${learn.port}${TARGET}`, HOST, 400)));
    }

    const hookBody = JSON.stringify({ type: 'charge.succeeded', data: { id: 'ch_1', amount: 4200, note: 'x'.repeat(800) } });
    const hookRuns: LoadResult[] = [];
    for (let i = 0; i < rounds; i++) {
      hookRuns.push(await load({ url: `http://127.0.0.1:${hooks.port}/webhook/default/${hooks.service}`, pid: hooks.child.pid!, seconds, connections: 50, method: 'POST', body: hookBody, headers: { 'content-type': 'application/json', 'payments-signature': 't=1700000000,v1=abc' } }));
    }
    // The sync layer over what was captured, into a fresh database.
    const store = Store.open({ memory: true });
    await store.migrate();
    const changes = new ChangeFeed(store);
    const sync = new SyncLayer(hooks.dataDir, new AgentDataRepo(store, changes), changes, pino({ level: 'silent' }));
    const lines = readdirSync(path.join(hooks.dataDir, 'webhooks')).length;
    const t = performance.now();
    const report = await sync.runOnce();
    const syncSeconds = (performance.now() - t) / 1000;
    await store.close();

    const rps = (k: string) => mock[k]!.map((r) => r.rps);
    const row = (name: string, k: string) =>
      `| ${name} | ${fmt(median(rps(k)))} | ${rps(k).map(fmt).join(', ')} | ${median(mock[k]!.map((r) => r.p50))} | ${median(mock[k]!.map((r) => r.p99))} | ${(median(rps(k)) / median(rps('bare')) * 100).toFixed(1)} % |`;
    const hookRps = hookRuns.map((r) => r.rps);
    const added = pct(through, 50) - pct(direct, 50);
    return `## Agent: MOCK, LEARN and webhook capture

Measured ${new Date().toISOString().slice(0, 10)} with \`npm run bench\` on ${machine()}.

### MOCK throughput (targets: ≥ 50 % of bare node:http with 10,000 entries, p99 ≤ 10 ms; 100,000 within 10 % of 100)

${generator}, 50 connections, ${rounds} runs of ${seconds} s per server after a warm-up, servers alternating; median of the runs.
Every server answers \`GET ${TARGET}\` with the same 204-byte JSON body. The agent binds the request by hostname and
matches it against a template (\`/v1/customers/{customer_id}\`) among N-1 distractor templates (\`/v1/thing{i}/{id}\`).

| server | req/s (median) | runs | p50 ms | p99 ms | vs bare |
|---|---:|---|---:|---:|---:|
${row('bare node:http, same bytes', 'bare')}
${row('agent MOCK, 100 entries', 'm100')}
${row('agent MOCK, 10,000 entries', 'm10k')}
${row('agent MOCK, 100,000 entries', 'm100k')}

100,000 entries against 100: **${(median(rps('m100k')) / median(rps('m100')) * 100).toFixed(1)} %** of the throughput.

### LEARN added latency (target ≤ 1 ms at p50)

2,000 sequential requests each (interleaved in blocks of 400), one connection, upstream = the bare server above
(pinned to the same core as the agent). The agent forwards, streams back and records each exchange.

| path | p50 ms | p99 ms |
|---|---:|---:|
| direct to the upstream | ${pct(direct, 50).toFixed(3)} | ${pct(direct, 99).toFixed(3)} |
| through the agent in LEARN | ${pct(through, 50).toFixed(3)} | ${pct(through, 99).toFixed(3)} |
| **added at p50** | **${added.toFixed(3)}** | |

### Webhook capture (target ≥ 5,000/s sustained) and the sync layer

autocannon POSTs a 900-byte JSON body with a \`Payments-Signature\` header, 50 connections, ${rounds} runs of ${seconds} s.
Each capture is one O_APPEND write, answered after the write completes.

| measure | value |
|---|---:|
| captures/s (median of ${rounds}) | ${fmt(median(hookRps))} (runs: ${hookRps.map(fmt).join(', ')}) |
| p99 ms | ${median(hookRuns.map((r) => r.p99))} |
| sync layer: lines imported in one pass | ${fmt(report.imported.webhooks)} from ${lines} file(s) in ${syncSeconds.toFixed(1)} s |
| sync layer import rate | ${fmt(report.imported.webhooks / syncSeconds)} lines/s (PGlite in memory) |`;
  } finally {
    for (const s of all) s.child.kill();
  }
}
