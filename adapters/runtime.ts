import { readFileSync } from 'node:fs';
import { asFunction, asValue, type AwilixContainer } from 'awilix';
import { pino, type Logger } from 'pino';
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import { loadProcessConfig, type ProcessConfig } from '../kernel/config.js';
import { createContainer } from '../kernel/container.js';
import type { Licence, Mode, Service } from '../kernel/domain/index.js';
import { createKernel, type Kernel } from '../kernel/kernel.js';
import { DEFAULT_LICENCE, verifyLicence } from '../kernel/license.js';
import { BUILTIN_PLUGIN_MODULES } from '../plugins/index.js';
import { Authenticator } from './http/auth.js';
import { HealthMonitor, HealthProbes } from './http/health-monitor.js';
import { BUCKETS, RateLimiter, type BucketName } from './http/middleware/rate-limit.js';
import { Store, type StoreOptions } from './store/connection.js';
import { ActivityRepo } from './store/repositories/activity.js';
import { AgentDataRepo } from './store/repositories/agent-data.js';
import { MocksRepo } from './store/repositories/mocks.js';
import { SyncLayer } from './volume/sync.js';
import { ApiKeysRepo } from './store/repositories/api-keys.js';
import { ChangeFeed, TopicCache } from './store/repositories/change-versions.js';
import { IdempotencyRepo } from './store/repositories/idempotency.js';
import { MilestonesRepo } from './store/repositories/milestones.js';
import { ServicesRepo } from './store/repositories/services.js';
import { SessionsRepo } from './store/repositories/sessions.js';
import { TenantConfigRepo } from './store/repositories/tenant-config.js';
import { TenantStateRepo } from './store/repositories/tenant-state.js';
import { EndpointPatternsRepo } from './store/repositories/endpoint-patterns.js';
import { TenantSecretsRepo } from './store/repositories/tenant-secrets.js';
import { TransitionJobsRepo } from './store/repositories/transition-jobs.js';
import { TransitionRunner } from '../pipelines/transition-runner.js';

/** Everything the container holds. Route handlers and the agent take what they need from it. @public */
export interface Cradle {
  config: ProcessConfig;
  logger: Logger;
  licence: Licence;
  /** This deployment's tenant (from the licence). */
  tenant: string;
  store: Store;
  changes: ChangeFeed;
  kernel: Kernel;
  services: ServicesRepo;
  servicesCache: TopicCache<Service[]>;
  apiKeys: ApiKeysRepo;
  sessions: SessionsRepo;
  activity: ActivityRepo;
  tenantConfig: TenantConfigRepo;
  tenantState: TenantStateRepo;
  modeCache: TopicCache<Mode>;
  milestones: MilestonesRepo;
  idempotency: IdempotencyRepo;
  mocks: MocksRepo;
  agentData: AgentDataRepo;
  sync: SyncLayer;
  tenantSecrets: TenantSecretsRepo;
  endpointPatterns: EndpointPatternsRepo;
  transitionJobs: TransitionJobsRepo;
  /** Runs transition jobs; started by the control plane. */
  transitions: TransitionRunner;
  auth: Authenticator;
  rateLimiter: RateLimiter;
  healthProbes: HealthProbes;
  health: HealthMonitor;
  /** This process's Prometheus registry. */
  metrics: Registry;
}

/** A wired, migrated, booted process. @public */
export interface Runtime {
  container: AwilixContainer<Cradle>;
  cradle: Cradle;
  close(): Promise<void>;
}

/** Reads the licence named by config; throws a message that says how to fix a bad one. */
export function loadLicence(config: ProcessConfig): Licence {
  if (!config.licenseKey) return DEFAULT_LICENCE;
  if (!config.licensePublicKey) throw new Error('SERVICE_LICENSE_KEY is set but SERVICE_LICENSE_PUBLIC_KEY is not; set it to the public.pem from `understudy license keygen`.');
  const pem = config.licensePublicKey.includes('BEGIN PUBLIC KEY') ? config.licensePublicKey : readFileSync(config.licensePublicKey, 'utf8');
  return verifyLicence(config.licenseKey, pem);
}

function rateLimits(config: ProcessConfig): Partial<Record<BucketName, number>> {
  for (const name of Object.keys(config.rateLimits)) {
    if (!Object.hasOwn(BUCKETS, name)) throw new Error(`SERVICE_RATE_LIMITS names unknown bucket '${name}'; buckets: ${Object.keys(BUCKETS).join(', ')}.`);
  }
  return config.rateLimits as Partial<Record<BucketName, number>>;
}

/**
 * The one place everything is wired: opens and migrates the store, boots the kernel (built-in
 * and external plugins), registers repositories, caches, auth, rate limits and health.
 * @public
 */
export async function createRuntime(opts: { config?: ProcessConfig; store?: StoreOptions; logger?: Logger } = {}): Promise<Runtime> {
  const config = opts.config ?? loadProcessConfig();
  const licence = loadLicence(config);
  const logger =
    opts.logger ??
    pino({
      level: config.logLevel,
      base: { service: 'understudy' },
      // Belt and braces: nothing logs headers or keys, and if something ever does, it is masked.
      redact: { paths: ['*.headers.authorization', '*.headers.cookie', '*.headers["x-service-api-key"]', '*.headers["x-api-key"]', 'api_key', '*.api_key', 'raw_key'], censor: '[redacted]' },
    });
  const store = Store.open(opts.store ?? { databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  let kernel: Kernel | null = null;
  try {
    await store.migrate();
    kernel = await createKernel({ builtins: BUILTIN_PLUGIN_MODULES, external: config.plugins, workers: config.workers });
  } catch (err) {
    await store.close();
    throw err;
  }

  const container = createContainer<Cradle>();
  container.register({
    config: asValue(config),
    logger: asValue(logger),
    licence: asValue(licence),
    tenant: asValue(licence.tenant),
    store: asValue(store),
    kernel: asValue(kernel),
    changes: asFunction(({ store }: Cradle) => new ChangeFeed(store)).singleton(),
    services: asFunction(({ store, changes }: Cradle) => new ServicesRepo(store, changes)).singleton(),
    servicesCache: asFunction(({ services, changes }: Cradle) => new TopicCache(changes, 'services', (t) => services.all(t))).singleton(),
    apiKeys: asFunction(({ store, changes }: Cradle) => new ApiKeysRepo(store, changes)).singleton(),
    sessions: asFunction(({ store }: Cradle) => new SessionsRepo(store)).singleton(),
    activity: asFunction(({ store }: Cradle) => new ActivityRepo(store)).singleton(),
    tenantConfig: asFunction(({ store, changes, logger }: Cradle) => new TenantConfigRepo(store, changes, logger)).singleton(),
    tenantState: asFunction(({ store, changes }: Cradle) => new TenantStateRepo(store, changes)).singleton(),
    modeCache: asFunction(({ tenantState, changes }: Cradle) => new TopicCache(changes, 'mode', async (t) => (await tenantState.mode(t)).mode)).singleton(),
    milestones: asFunction(({ store }: Cradle) => new MilestonesRepo(store)).singleton(),
    idempotency: asFunction(({ store }: Cradle) => new IdempotencyRepo(store)).singleton(),
    mocks: asFunction(({ store, changes }: Cradle) => new MocksRepo(store, changes)).singleton(),
    agentData: asFunction(({ store, changes }: Cradle) => new AgentDataRepo(store, changes)).singleton(),
    sync: asFunction(({ config, agentData, changes, logger }: Cradle) => new SyncLayer(config.dataDir, agentData, changes, logger)).singleton(),
    tenantSecrets: asFunction(({ store }: Cradle) => new TenantSecretsRepo(store)).singleton(),
    endpointPatterns: asFunction(({ store }: Cradle) => new EndpointPatternsRepo(store)).singleton(),
    transitionJobs: asFunction(({ store, tenantState }: Cradle) => new TransitionJobsRepo(store, tenantState)).singleton(),
    transitions: asFunction((cradle: Cradle) => new TransitionRunner(cradle)).singleton(),
    auth: asFunction(({ tenant, apiKeys, sessions, changes }: Cradle) => new Authenticator(tenant, apiKeys, sessions, changes)).singleton(),
    rateLimiter: asValue(new RateLimiter({ limits: rateLimits(config) })),
    healthProbes: asFunction(({ store, config }: Cradle) => new HealthProbes(store, config)).singleton(),
    health: asFunction(({ healthProbes, config }: Cradle) => new HealthMonitor(healthProbes, config.healthRefreshMs)).singleton(),
    metrics: asFunction(({ sync }: Cradle) => {
      const registry = new Registry();
      collectDefaultMetrics({ register: registry });
      new Gauge({
        name: 'understudy_sync_lag_seconds',
        help: 'Age of the oldest JSONL line the sync layer has seen but not imported (0 when caught up)',
        registers: [registry],
        collect() {
          this.set(sync.lagSeconds());
        },
      });
      return registry;
    }).singleton(),
  });

  // Everything is a singleton: resolve it all now, so a wiring mistake fails at start, and hand
  // out a plain object (property reads on the hot path skip the container's proxy).
  const cradle = Object.freeze(Object.fromEntries(Object.keys(container.registrations).map((name) => [name, container.resolve(name)]))) as Cradle;
  await cradle.changes.refresh();
  // Other processes' writes are only possible on PostgreSQL; PGlite lives in this process, whose
  // own writes are signalled at commit, so polling it would only stall the event loop.
  if (store.dialect === 'postgres') cradle.changes.start(1000);
  return {
    container,
    cradle,
    async close() {
      cradle.health.stop();
      cradle.sync.stop();
      await cradle.transitions.stop();
      cradle.changes.stop();
      await kernel.close();
      await store.close();
    },
  };
}

/**
 * Mints an API key and marks the onboarding step; every way of making a key goes through here.
 * The raw key is in the result only.
 * @public
 */
export async function mintApiKey(cradle: Pick<Cradle, 'apiKeys' | 'milestones' | 'tenant'>, opts: { name?: string | null; raw?: string } = {}) {
  const minted = await cradle.apiKeys.create(cradle.tenant, opts);
  await cradle.milestones.reach(cradle.tenant, 'key_created');
  return minted;
}

/**
 * Registers `SERVICE_BOOTSTRAP_API_KEY` when it is new; without it, mints a key when the tenant
 * has none. Returns the raw key when one was minted (the caller prints it once), else null.
 * @public
 */
export async function bootstrapApiKey(cradle: Cradle): Promise<string | null> {
  const { apiKeys, tenant, config, milestones } = cradle;
  if (config.bootstrapApiKey) {
    if (await apiKeys.ensure(tenant, config.bootstrapApiKey, 'bootstrap')) await milestones.reach(tenant, 'key_created');
    return null;
  }
  if ((await apiKeys.count(tenant)) > 0) return null;
  return (await mintApiKey(cradle, { name: 'first key' })).raw;
}
