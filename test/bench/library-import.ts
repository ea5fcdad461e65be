/**
 * One import in a process of its own, for the library benchmark: registers a service, imports
 * FILE through the seed pipeline (as `understudy import` does) and prints seconds, peak RSS and
 * the report's counts as one JSON line. Args: FORMAT FILE MEDIA_TYPE UPSTREAM DATA_DIR; BENCH_SCRUB=true|false
 * overrides the format's default scrubbing.
 */
import { createReadStream, statSync } from 'node:fs';
import { loadProcessConfig } from '../../kernel/config.js';
import { createRuntime } from '../../adapters/runtime.js';
import { runSeed } from '../../pipelines/seed.js';
import { testStoreOptions } from '../helpers/harness.js';

const [format, file, mediaType, upstream, dataDir] = process.argv.slice(2) as [string, string, string, string, string];
// On PostgreSQL, a schema of its own (dropped after); else PGlite on disk in DATA_DIR, as `understudy import` runs by default.
const store = process.env.DATABASE_URL ? testStoreOptions() : undefined;
const runtime = await createRuntime({ config: loadProcessConfig({ ...process.env, SERVICE_DATA_DIR: dataDir, LOG_LEVEL: 'silent' }), ...(store && { store }) });
const { cradle } = runtime;
const service = await cradle.services.create(cradle.tenant, { name: 'bench', upstream_url: upstream, routing_type: 'path_prefix', routing_value: '/bench', mode_override: null });
const rssBeforeMiB = process.memoryUsage().rss / 2 ** 20;
const started = performance.now();
const report = await runSeed(
  { tenant: cradle.tenant, kernel: cradle.kernel, store: cradle.store, mocks: cradle.mocks, tenantConfig: cradle.tenantConfig, tenantSecrets: cradle.tenantSecrets, services: [service] },
  { format, mediaType, source: createReadStream(file, { highWaterMark: 1 << 20 }), serviceId: service.id, size: statSync(file).size, ...(process.env.BENCH_SCRUB && { scrub: process.env.BENCH_SCRUB === 'true' }) },
);
const seconds = (performance.now() - started) / 1000;
await runtime.close();
await store?.cleanup();
process.stdout.write(`${JSON.stringify({ seconds, rssBeforeMiB, maxRssMiB: process.resourceUsage().maxRSS / 1024, created: report.created, duplicates: report.duplicates, skipped: report.skipped_total })}\n`);
