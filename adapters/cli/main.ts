#!/usr/bin/env node
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { hostForUrl, loadProcessConfig } from '../../kernel/config.js';
import { TIERS, type Tier } from '../../kernel/domain/index.js';
import { generateLicenceKeyPair, issueLicence } from '../../kernel/license.js';
import { createAgent, type Agent } from '../agent/server.js';
import { createApp } from '../http/app.js';
import { ALL_ROUTES } from '../http/routes/index.js';
import { bootstrapApiKey, createRuntime, mintApiKey, type Runtime } from '../runtime.js';
import { Store } from '../store/connection.js';
import { registerLibraryCommands } from './library.js';
import { registerTransitionCommand } from './transition.js';

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : port);
    });
  });
}

/** Starts the chosen listeners, prints a first API key when one was minted, and stops cleanly on SIGINT/SIGTERM. */
async function run(parts: { controlPlane: boolean; agent: boolean }): Promise<void> {
  const config = loadProcessConfig();
  if (!config.databaseUrl && !(parts.controlPlane && parts.agent)) {
    throw new Error('running the control plane and the agent apart needs PostgreSQL (set DATABASE_URL); PGlite lives inside one process, so use `understudy serve`.');
  }
  const runtime: Runtime = await createRuntime({ config });
  const { cradle } = runtime;
  const servers: Server[] = [];
  let agent: Agent | null = null;
  try {
    if (parts.agent) {
      agent = createAgent(cradle);
      servers.push(agent.server);
      const port = await listen(agent.server, config.agentPort, config.host);
      cradle.logger.info({ port, host: config.host }, 'agent listening');
      // With AGENT_PORT=0 the port is known only now; the control plane probes this agent.
      if (!process.env.SERVICE_AGENT_URL) config.agentUrl = `http://${hostForUrl(config.host)}:${port}`;
    }
    if (parts.controlPlane) {
      const raw = await bootstrapApiKey(cradle);
      const http = createServer(createApp(cradle, ALL_ROUTES).callback());
      servers.push(http);
      const port = await listen(http, config.port, config.host);
      cradle.logger.info({ port, host: config.host }, 'control plane listening');
      cradle.health.start();
      cradle.sync.start(1000);
      cradle.transitions.start();
      if (raw) {
        process.stdout.write(`\nNo API key existed, so one was created. It is shown once; keep it:\n\n  ${raw}\n\nUse it as: curl -H 'X-Service-Api-Key: ${raw}' http://${hostForUrl(config.host)}:${port}/services\n\n`);
      }
    }
  } catch (err) {
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
    await agent?.close();
    await runtime.close();
    throw err;
  }
  const stop = async (signal: string) => {
    cradle.logger.info({ signal }, 'shutting down');
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
    for (const s of servers) s.closeAllConnections();
    await agent?.close();
    await cradle.sync.runOnce().catch(() => undefined);
    await runtime.close();
    process.exit(0);
  };
  process.once('SIGINT', (s) => void stop(s));
  process.once('SIGTERM', (s) => void stop(s));
}

function tier(value: string): Tier {
  if (!TIERS.includes(value as Tier)) throw new InvalidArgumentError(`one of ${TIERS.join(', ')}`);
  return value as Tier;
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('a whole number of at least 1');
  return n;
}

const program = new Command('understudy')
  .description('Record HTTP traffic, scrub it, and serve it back as mocks.\nSettings come from environment variables; see the README.')
  .showHelpAfterError();

program
  .command('serve')
  .description('Run the control plane (PORT, default 8000) and the agent (AGENT_PORT, default 8080) in one process')
  .action(() => run({ controlPlane: true, agent: true }));

program
  .command('control-plane')
  .description('Run only the control-plane API (needs DATABASE_URL, shared with the agents)')
  .action(() => run({ controlPlane: true, agent: false }));

program
  .command('agent')
  .description('Run only the agent (needs DATABASE_URL, shared with the control plane)')
  .action(() => run({ controlPlane: false, agent: true }));

program
  .command('migrate')
  .description('Bring the database schema up to date and exit')
  .action(async () => {
    const config = loadProcessConfig();
    const store = Store.open({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
    try {
      await store.migrate();
      process.stdout.write(`database is up to date (${store.dialect})\n`);
    } finally {
      await store.close();
    }
  });

const keys = program.command('keys').description('Manage API keys');
keys
  .command('create')
  .description('Mint an API key in the configured database and print it once')
  .option('--name <name>', 'a label shown by GET /v1/api-keys', 'cli')
  .action(async (opts: { name: string }) => {
    const runtime = await createRuntime();
    try {
      const { raw, key } = await mintApiKey(runtime.cradle, { name: opts.name });
      process.stdout.write(`${raw}\n`);
      process.stderr.write(`created key ${key.id} (prefix ${key.prefix}) for tenant ${runtime.cradle.tenant}; it is not shown again\n`);
    } finally {
      await runtime.close();
    }
  });

registerTransitionCommand(program);

const license = program.command('license').description('Licence keys: Ed25519-signed {tenant, tier, exp}');
license
  .command('keygen')
  .description('Write an Ed25519 key pair (private.pem, public.pem) for signing licences')
  .option('--out <dir>', 'directory to write into', '.')
  .action((opts: { out: string }) => {
    const pair = generateLicenceKeyPair();
    mkdirSync(opts.out, { recursive: true });
    const priv = path.join(opts.out, 'private.pem');
    const pub = path.join(opts.out, 'public.pem');
    writeFileSync(priv, pair.privateKey, { mode: 0o600, flag: 'wx' });
    writeFileSync(pub, pair.publicKey, { flag: 'wx' });
    process.stdout.write(`wrote ${priv} (keep it secret) and ${pub} (SERVICE_LICENSE_PUBLIC_KEY)\n`);
  });
license
  .command('issue')
  .description('Print a licence token for SERVICE_LICENSE_KEY')
  .requiredOption('--tenant <id>', 'tenant id ([A-Za-z0-9_-]{1,64})')
  .addOption(new Option('--tier <tier>', `one of ${TIERS.join(', ')}`).argParser(tier).default('free'))
  .requiredOption('--private-key <file>', 'the private.pem from `license keygen`')
  .option('--days <n>', 'days until it expires (default: never)', positiveInt)
  .action((opts: { tenant: string; tier: Tier; privateKey: string; days?: number }) => {
    const exp = opts.days ? Math.floor(Date.now() / 1000) + opts.days * 86400 : undefined;
    const token = issueLicence({ tenant: opts.tenant, tier: opts.tier, ...(exp !== undefined && { exp }) }, readFileSync(opts.privateKey, 'utf8'));
    process.stdout.write(`${token}\n`);
  });

registerLibraryCommands(program);

program.parseAsync().catch((err: unknown) => {
  process.stderr.write(`understudy: ${(err as Error).message}\n`);
  process.exit(1);
});
