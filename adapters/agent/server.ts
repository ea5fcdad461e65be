import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import path from 'node:path';
import type { Logger } from 'pino';
import { mergeTenantConfig, type ProcessConfig } from '../../kernel/config.js';
import type { Mode, Service } from '../../kernel/domain/index.js';
import { AppError } from '../../kernel/errors.js';
import type { Kernel } from '../../kernel/kernel.js';
import type { Store } from '../store/connection.js';
import type { AgentDataRepo } from '../store/repositories/agent-data.js';
import { TopicCache, type ChangeFeed } from '../store/repositories/change-versions.js';
import type { MilestonesRepo } from '../store/repositories/milestones.js';
import type { MocksRepo } from '../store/repositories/mocks.js';
import type { TenantConfigRepo } from '../store/repositories/tenant-config.js';
import { BatchedRecorder, JsonlFiles } from '../volume/jsonl.js';
import type { Exchange, ModeHandler } from './exchange.js';
import { readBody, sendError, sendJson } from './exchange.js';
import { Forwarder } from './forward.js';
import { MockLibrary } from './library.js';
import { AgentMetrics, type IoOperation } from './metrics.js';
import { learnMode } from './modes/learn.js';
import { mockMode } from './modes/mock.js';
import { passthroughMode } from './modes/passthrough.js';
import { transitioningMode } from './modes/transitioning.js';
import { ServiceRouter } from './routing.js';
import { AgentStats } from './stats.js';
import { captureWebhook, isWebhookPath } from './webhooks.js';

/** Largest request body the agent forwards. */
const MAX_FORWARD_BYTES = 100 * 1024 * 1024;

/** What the agent needs from the container. */
export interface AgentDeps {
  tenant: string;
  config: ProcessConfig;
  logger: Logger;
  store: Store;
  changes: ChangeFeed;
  kernel: Kernel;
  servicesCache: TopicCache<Service[]>;
  modeCache: TopicCache<Mode>;
  mocks: MocksRepo;
  agentData: AgentDataRepo;
  tenantConfig: TenantConfigRepo;
  milestones: MilestonesRepo;
}

/** The agent: its HTTP server and the parts tests and shutdown reach into. @public */
export interface Agent {
  server: Server;
  metrics: AgentMetrics;
  /** Writes queued traffic lines and counts now. */
  flush(): Promise<void>;
  /** The library version in memory. */
  libraryVersion(): number;
  close(): Promise<void>;
}


/**
 * The data plane on plain node:http: binds each request to a service, then answers it in the
 * service's mode (its override, else the global mode): LEARN forwards and records, PASSTHROUGH
 * and TRANSITIONING forward, MOCK answers from the in-memory library. It also captures webhooks
 * at `/webhook/{tenant}/{service_id}` whatever the mode, and serves `GET /__understudy/health`
 * and `GET /metrics`. Services, mode, config and library live in memory and follow changes
 * within a second, so MOCK keeps answering while the database is away.
 * @public
 */
export function createAgent(deps: AgentDeps): Agent {
  const { tenant, config, logger, changes, modeCache, servicesCache } = deps;
  const metrics = new AgentMetrics();
  const ioError = (operation: IoOperation, err: Error) => {
    metrics.ioErrors.inc({ operation });
    logger.error({ operation, err: err.message }, 'data volume write failed');
  };
  const trafficFiles = new JsonlFiles(path.join(config.dataDir, 'traffic'), (step, err) => ioError(`traffic_${step}`, err));
  const webhookFiles = new JsonlFiles(path.join(config.dataDir, 'webhooks'), (step, err) => ioError(`webhook_${step}`, err));
  const recorder = new BatchedRecorder(trafficFiles, logger);
  const forwarder = new Forwarder();
  const stats = new AgentStats(tenant, deps.mocks, deps.agentData, logger);
  const routers = new TopicCache(changes, 'services', async (t) => new ServiceRouter(await servicesCache.get(t)));
  const tenantSettings = new TopicCache(changes, 'config', async (t) => mergeTenantConfig(await deps.tenantConfig.overrides(t)));
  let settings = mergeTenantConfig({});
  const parsers = deps.kernel.plugins
    .ofKind('signature-parser')
    .map((p) => p.instance)
    .sort((a, b) => a.order - b.order);

  // The library: the loaded one keeps serving while a newer version loads.
  let library = new MockLibrary([]);
  let libraryVersion = -1;
  let loading: Promise<void> | null = null;
  const loadLibrary = (): Promise<void> => {
    if (loading) return loading;
    const version = changes.version(tenant, 'library');
    if (version === libraryVersion) return Promise.resolve();
    loading = deps.mocks
      .all(tenant)
      .then((entries) => {
        library = new MockLibrary(entries);
        libraryVersion = version;
        metrics.librarySize.set(library.size);
      })
      .catch((err: unknown) => logger.warn({ err: (err as Error).message }, 'could not load the mock library; serving the one in memory'))
      .finally(() => {
        loading = null;
      });
    return loading;
  };
  const onChange = (t: string, topic: string) => {
    if (t !== tenant) return;
    if (topic === 'library') void loadLibrary().then(() => (changes.version(tenant, 'library') !== libraryVersion ? loadLibrary() : undefined));
    if (topic === 'config') void tenantSettings.get(tenant).then((s) => (settings = s), () => undefined);
  };
  changes.on('change', onChange);
  void loadLibrary();
  void tenantSettings.get(tenant).then((s) => (settings = s), () => undefined);
  // Counts go to the database every 5 s: each flush is a transaction, and on PGlite a
  // transaction runs on this thread, so flushing every second would show in tail latency.
  stats.start(5000);

  const firsts = new Set<string>();
  const once = (milestone: 'traffic_recorded' | 'mock_served') => {
    if (firsts.has(milestone)) return;
    firsts.add(milestone);
    deps.milestones.reach(tenant, milestone).catch(() => firsts.delete(milestone));
  };

  const modes: Record<Mode, ModeHandler> = {
    LEARN: learnMode({
      forwarder,
      maxBodyBytes: () => Number(settings.record_max_body_bytes),
      record: (ex, record) => {
        recorder.record(ex.service.id, record);
        once('traffic_recorded');
      },
    }),
    PASSTHROUGH: passthroughMode({ forwarder }),
    TRANSITIONING: transitioningMode({ forwarder }),
    MOCK: mockMode({
      library: () => library,
      latencyMs: () => Number(settings.mock_latency_ms),
      onHit: (entry) => {
        stats.hit(entry);
        once('mock_served');
      },
      onMiss: (...args) => stats.miss(...args),
    }),
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const startedAt = performance.now();
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const rawPath = q === -1 ? url : url.slice(0, q);
    if (rawPath === '/__understudy/health' && (req.method === 'GET' || req.method === 'HEAD')) {
      const [mode, services] = await Promise.all([modeCache.get(tenant), servicesCache.get(tenant)]);
      return sendJson(res, 200, { status: 'ok', mode, services_bound: services.length, library_version: libraryVersion, library_entries: library.size });
    }
    if (rawPath === '/metrics' && req.method === 'GET') {
      const text = await metrics.registry.metrics();
      res.writeHead(200, { 'content-type': metrics.registry.contentType });
      return void res.end(text);
    }
    if (isWebhookPath(rawPath)) {
      return captureWebhook(req, res, {
        tenant,
        maxBytes: config.webhookMaxBytes,
        services: () => servicesCache.get(tenant),
        parsers,
        files: webhookFiles,
        onCaptured: (kind, persisted) => metrics.webhooks.inc({ kind, persisted: String(persisted) }),
      });
    }
    const router = routers.peek(tenant) ?? (await routers.get(tenant));
    const route = router.resolve(url, req.headers.host);
    if (!('service' in route)) {
      req.resume();
      return sendError(res, 404, new AppError('not_found', `no service is bound to host '${route.host}' or to a prefix of '${route.path}'; bindings: ${router.describe()}`).toBody());
    }
    const body = await readBody(req, MAX_FORWARD_BYTES);
    if (!body) return sendError(res, 413, new AppError('payload_too_large', `request bodies through the agent are limited to ${MAX_FORWARD_BYTES} bytes`).toBody());
    const mode: Mode = route.service.mode_override ?? modeCache.peek(tenant) ?? (await modeCache.get(tenant));
    const ex: Exchange = {
      req,
      res,
      tenant,
      service: route.service,
      mode,
      method: req.method ?? 'GET',
      uri: route.uri,
      path: route.path,
      search: route.search,
      body,
      bodyTruncated: false,
      startedAt,
      startedIso: new Date().toISOString(),
    };
    // A transition commits the library and the switch to MOCK together: a MOCK answer waits for
    // the load of a newer library already under way (never starts one: with the database away,
    // the library in memory keeps serving).
    for (let i = 0; mode === 'MOCK' && loading && i < 2 && changes.version(tenant, 'library') !== libraryVersion; i++) await loading;
    const { match } = await modes[mode].handle(ex);
    metrics.requests.inc({ service: route.service.id, mode, match });
    metrics.latency.observe({ mode }, (performance.now() - startedAt) / 1000);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      logger.error({ err }, 'agent request failed');
      if (!res.headersSent) sendError(res, 500, new AppError('internal_error').toBody());
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 65_000;

  return {
    server,
    metrics,
    libraryVersion: () => libraryVersion,
    flush: async () => {
      await recorder.flush();
      await stats.flush();
    },
    async close() {
      changes.off('change', onChange);
      stats.stop();
      await recorder.flush();
      await stats.flush();
      await Promise.all([trafficFiles.close(), webhookFiles.close(), forwarder.close()]);
    },
  };
}
