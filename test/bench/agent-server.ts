/**
 * Servers for the agent benchmark, one per process so each can be pinned to a core.
 *   bare                      node:http answering the mock's exact bytes
 *   mock N [PORT]             the agent in MOCK with N library entries (N-1 distractor templates),
 *                             bound by hostname 127.0.0.1 so plain URLs reach it (../shared/bench)
 *   learn UPSTREAM_URL        the agent in LEARN in front of UPSTREAM_URL
 *   webhooks                  the agent, for webhook captures
 * Prints `{"port": N, ...}` once listening.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { createAgent } from '../../adapters/agent/server.js';
import { createRuntime } from '../../adapters/runtime.js';
import { loadProcessConfig } from '../../kernel/config.js';
import type { MockInput } from '../../adapters/store/repositories/mocks.js';

const BODY = readFileSync(new URL('../../../test/fixtures/bench/body.json', import.meta.url));
const [kind, arg] = process.argv.slice(2);

function listen(server: ReturnType<typeof createServer>, extra: Record<string, unknown> = {}) {
  server.listen(kind === 'mock' ? Number(process.argv[4] ?? 0) : 0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port, ...extra })}\n`));
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(0));

if (kind === 'bare') {
  listen(createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': BODY.length });
    res.end(BODY);
  }));
} else {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'understudy-bench-'));
  const config = loadProcessConfig({ SERVICE_DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
  const runtime = await createRuntime({ config, store: { memory: true }, logger: pino({ level: 'silent' }) });
  const { cradle } = runtime;
  const upstream = kind === 'learn' ? arg! : 'http://127.0.0.1:9';
  const service = await cradle.services.create(cradle.tenant, { name: 'bench', upstream_url: upstream, routing_type: 'hostname', routing_value: 'bench.test', mode_override: null });
  // The peers harness requests plain http://127.0.0.1:PORT/… URLs.
  await cradle.services.create(cradle.tenant, { name: 'loopback', upstream_url: upstream, routing_type: 'hostname', routing_value: '127.0.0.1', mode_override: null });
  if (kind === 'mock') {
    const n = Number(arg);
    const entry = (i: number): MockInput => ({
      service_id: service.id,
      service_upstream_id: upstream,
      method: 'GET',
      path: i === n - 1 ? '/v1/customers/cus_1' : `/v1/thing${i}/abc`,
      uri_template: i === n - 1 ? '/v1/customers/{customer_id}' : `/v1/thing${i}/{id}`,
      query: null,
      body_matcher: null,
      response: { status: 200, headers: { 'content-type': 'application/json' }, body: BODY.toString('utf8') },
      source: 'manual',
      scrubbed: true,
    });
    for (let i = 0; i < n; i += 5000) await cradle.mocks.upsertMany(cradle.tenant, Array.from({ length: Math.min(5000, n - i) }, (_, k) => entry(i + k)));
    const loopback = (await cradle.services.all(cradle.tenant)).find((s) => s.routing_value === '127.0.0.1')!;
    await cradle.mocks.upsertMany(cradle.tenant, [...Array.from({ length: 200 }, (_, i) => entry(i)), entry(n - 1)].map((e) => ({ ...e, service_id: loopback.id })));
    await cradle.tenantState.setMode(cradle.tenant, 'MOCK');
  }
  const agent = createAgent(cradle);
  // Wait until the library in memory is the one just written.
  while (agent.libraryVersion() !== cradle.changes.version(cradle.tenant, 'library')) await new Promise((r) => setTimeout(r, 50));
  listen(agent.server, { service: service.id, dataDir });
}
