/**
 * A server for the platform benchmark, run as its own process so it can be pinned to one core:
 * `understudy` = the real control plane on PGlite with three services; `bare` = a bare Koa route
 * answering the same JSON. Prints `{"port": N}` once listening.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import Koa from 'koa';
import { pino } from 'pino';
import { loadProcessConfig } from '../../kernel/config.js';
import { createApp } from '../../adapters/http/app.js';
import { ALL_ROUTES } from '../../adapters/http/routes/index.js';
import { bootstrapApiKey, createRuntime } from '../../adapters/runtime.js';

const KEY = `usk_${'B'.repeat(40)}`;
const kind = process.argv[2];

async function app(): Promise<Koa> {
  if (kind === 'bare') {
    const body = JSON.parse(process.argv[3] ?? '{}') as unknown;
    const koa = new Koa();
    const router = new Router();
    router.get('/services', (ctx) => {
      ctx.body = body;
    });
    koa.use(router.routes());
    return koa;
  }
  const config = loadProcessConfig({ SERVICE_BOOTSTRAP_API_KEY: KEY, SERVICE_RATE_LIMITS: 'global=100000000', LOG_LEVEL: 'silent' });
  const runtime = await createRuntime({ config, store: { memory: true }, logger: pino({ level: 'silent' }) });
  await bootstrapApiKey(runtime.cradle);
  for (const n of [1, 2, 3]) {
    await runtime.cradle.services.create(runtime.cradle.tenant, { name: `svc ${n}`, upstream_url: `http://127.0.0.1:${9000 + n}`, routing_type: 'path_prefix', routing_value: `/s${n}`, mode_override: null });
  }
  return createApp(runtime.cradle, ALL_ROUTES);
}

const server = createServer((await app()).callback());
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port, key: KEY })}\n`);
});
// Exit cleanly on a signal, so a --cpu-prof run writes its profile.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(0));
