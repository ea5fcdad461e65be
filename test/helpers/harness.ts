import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { createServer, type Server } from 'node:http';
import { pino } from 'pino';
import { loadProcessConfig } from '../../kernel/config.js';
import type { Tier } from '../../kernel/domain/index.js';
import { randomBase62 } from '../../kernel/ids.js';
import { generateLicenceKeyPair, issueLicence } from '../../kernel/license.js';
import { createAgent, type Agent } from '../../adapters/agent/server.js';
import { createApp } from '../../adapters/http/app.js';
import type { RouteSpec } from '../../adapters/http/route.js';
import { ALL_ROUTES } from '../../adapters/http/routes/index.js';
import { bootstrapApiKey, createRuntime, type Runtime } from '../../adapters/runtime.js';
import type { StoreOptions } from '../../adapters/store/connection.js';
import { Store } from '../../adapters/store/connection.js';

/** PostgreSQL when DATABASE_URL is set (a fresh schema per call), else in-memory PGlite. */
export function testStoreOptions(): StoreOptions & { cleanup: () => Promise<void> } {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) return { memory: true, cleanup: async () => undefined };
  const schema = `t_${randomBase62(12).toLowerCase()}`;
  return {
    databaseUrl,
    schema,
    poolMax: 4,
    cleanup: async () => {
      const admin = Store.open({ databaseUrl });
      try {
        await admin.knex.raw('DROP SCHEMA IF EXISTS ?? CASCADE', [schema]);
      } finally {
        await admin.close();
      }
    },
  };
}

export interface Harness {
  runtime: Runtime;
  agent: Agent;
  /** Control-plane base URL. */
  url: string;
  agentUrl: string;
  /** A valid API key. */
  apiKey: string;
  /** Everything logged, one JSON line per entry. */
  logs: string[];
  dataDir: string;
  /** fetch against the control plane with the API key unless `key: null`. */
  call(method: string, path: string, opts?: { body?: unknown; rawBody?: string | Buffer; headers?: Record<string, string>; key?: string | null }): Promise<{ status: number; headers: Headers; body: Record<string, unknown>; text: string }>;
  close(): Promise<void>;
}

/**
 * A real control plane and agent on loopback ports, over a real database, with a bootstrap key.
 * Rate limits are raised so that suites walking many routes are not throttled, unless given.
 */
export async function startHarness(opts: { tier?: Tier; env?: Record<string, string>; extraRoutes?: RouteSpec[] } = {}): Promise<Harness> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'understudy-test-'));
  const apiKey = `usk_${randomBase62(40)}`;
  const env: Record<string, string> = {
    HOST: '127.0.0.1',
    PORT: '0',
    AGENT_PORT: '0',
    SERVICE_DATA_DIR: dataDir,
    SERVICE_BOOTSTRAP_API_KEY: apiKey,
    SERVICE_RATE_LIMITS: 'global=1000000,transition_start=1000000,normalize=1000000',
    SERVICE_WORKERS: '1',
    LOG_LEVEL: 'info',
    ...opts.env,
  };
  if (opts.tier && opts.tier !== 'free') {
    const pair = generateLicenceKeyPair();
    env.SERVICE_LICENSE_KEY = issueLicence({ tenant: 'default', tier: opts.tier }, pair.privateKey);
    env.SERVICE_LICENSE_PUBLIC_KEY = pair.publicKey;
  }
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      logs.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  const config = loadProcessConfig(env);
  const storeOpts = testStoreOptions();
  const runtime = await createRuntime({ config, store: storeOpts, logger: pino({ level: config.logLevel }, sink) });
  await bootstrapApiKey(runtime.cradle);
  const agent = createAgent(runtime.cradle);
  const api = createServer(createApp(runtime.cradle, [...ALL_ROUTES, ...(opts.extraRoutes ?? [])]).callback());
  const listen = (s: Server) => new Promise<number>((resolve) => s.listen(0, '127.0.0.1', () => resolve((s.address() as AddressInfo).port)));
  const agentUrl = `http://127.0.0.1:${await listen(agent.server)}`;
  runtime.cradle.config.agentUrl = agentUrl;
  const url = `http://127.0.0.1:${await listen(api)}`;
  runtime.cradle.health.start();
  runtime.cradle.transitions.start();

  return {
    runtime,
    agent,
    url,
    agentUrl,
    apiKey,
    logs,
    dataDir,
    async call(method, p, o = {}) {
      const headers: Record<string, string> = { ...(o.key !== null && { 'X-Service-Api-Key': o.key ?? apiKey }), ...o.headers };
      let body: string | Buffer | undefined = o.rawBody;
      if (o.body !== undefined) {
        body = JSON.stringify(o.body);
        headers['Content-Type'] ??= 'application/json';
      }
      const res = await fetch(url + p, { method, headers, body });
      const text = await res.text();
      let parsed: Record<string, unknown>;
      try {
        parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
      } catch {
        parsed = {};
      }
      return { status: res.status, headers: res.headers, body: parsed, text };
    },
    async close() {
      await Promise.all([api, agent.server].map((s) => new Promise((r) => { s.close(r); s.closeAllConnections(); })));
      await agent.close();
      await runtime.close();
      await storeOpts.cleanup();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
