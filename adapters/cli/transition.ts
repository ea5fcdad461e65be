import { chmodSync, createReadStream, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { Command } from 'commander';
import { loadProcessConfig, validateTenantSetting } from '../../kernel/config.js';
import type { TrafficRecord } from '../../kernel/domain/index.js';
import { createKernel } from '../../kernel/kernel.js';
import { newPseudonymKey } from '../../kernel/scrub/pseudonym.js';
import { effectiveScrubRules, type ScrubRulesConfig } from '../../kernel/scrub/rules.js';
import type { Endpoint } from '../../pipelines/extract.js';
import { libraryEntries } from '../../pipelines/promote.js';
import { transitionPipeline } from '../../pipelines/transition.js';
import { BUILTIN_PLUGIN_MODULES } from '../../plugins/index.js';
import { progressBar } from './progress.js';

interface Options {
  traffic: string;
  service: string;
  out?: string;
  keyFile?: string;
  rules?: string;
  upstream: string;
}

/** The pseudonym key of offline runs: read from the file, or made there (readable by its owner only). */
function offlineKey(file: string): string {
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(path.dirname(file), { recursive: true });
  const key = newPseudonymKey();
  writeFileSync(file, `${key}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(file, 0o600);
  return key;
}

async function readTraffic(file: string, serviceId: string) {
  const records: TrafficRecord[] = [];
  const skipped = { other_service: 0, invalid: 0, no_response: 0, truncated: 0 };
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line.trim()) continue;
    let r: TrafficRecord;
    try {
      r = JSON.parse(line) as TrafficRecord;
      if (typeof r?.request?.uri !== 'string' || typeof r.service_id !== 'string') throw new Error('not a traffic record');
    } catch {
      skipped.invalid++;
      continue;
    }
    if (r.service_id !== serviceId) skipped.other_service++;
    else if (!r.response) skipped.no_response++;
    else if (r.response.body_truncated) skipped.truncated++;
    else records.push(r);
  }
  return { records, skipped };
}

async function transition(opts: Options): Promise<void> {
  const config = loadProcessConfig();
  const rules = opts.rules ? (validateTenantSetting('scrub_rules', JSON.parse(readFileSync(opts.rules, 'utf8'))) as ScrubRulesConfig) : {};
  const context = { tenantKey: offlineKey(opts.keyFile ?? path.join(config.dataDir, 'offline-pseudonym.key')), rules: effectiveScrubRules(rules, opts.service) };
  const { records, skipped } = await readTraffic(opts.traffic, opts.service);
  const kernel = await createKernel({ builtins: BUILTIN_PLUGIN_MODULES, external: config.plugins, workers: config.workers });
  const bar = progressBar('transition');
  try {
    let endpoints: Endpoint[] = [];
    await kernel.pipelines.run(
      transitionPipeline(kernel.plugins, (found) => (endpoints = found)),
      records,
      { context, onProgress: (p) => bar.update(p.progress, p.stage) },
    );
    bar.stop();
    const entries = libraryEntries({ id: opts.service, upstream_url: opts.upstream }, endpoints);
    // The shape of GET /mocks/export's native format, plus the service and its endpoint patterns.
    const library = { format: 'understudy-library', version: 1, exported_at: new Date().toISOString(), scrubbed_only: true, service_id: opts.service, entries, endpoints: endpoints.map((e) => e.patterns) };
    const text = `${JSON.stringify(library, null, 2)}\n`;
    if (opts.out) writeFileSync(opts.out, text);
    else process.stdout.write(text);
    const templated = endpoints.filter((e) => e.patterns.uri_template.includes('{')).length;
    const left = Object.entries(skipped).filter(([, n]) => n).map(([why, n]) => `${n} ${why.replace('_', ' ')}`);
    process.stderr.write(`${records.length} records → ${entries.length} entries on ${endpoints.length} endpoints (${templated} templated)${left.length ? `; skipped: ${left.join(', ')}` : ''}${opts.out ? `; written to ${opts.out}` : ''}\n`);
  } finally {
    bar.stop();
    await kernel.close();
  }
}

/** `understudy transition`: the transition pipeline over a JSONL file, no server or database. */
export function registerTransitionCommand(program: Command): void {
  program
    .command('transition')
    .description('Scrub, template and promote recorded traffic (a traffic/<service>.jsonl file) into a library file, with no server')
    .requiredOption('--traffic <file>', 'JSONL traffic as the agent records it')
    .requiredOption('--service <id>', 'the service whose records to use')
    .option('--out <file>', 'where to write the library (default: standard output)')
    .option('--key-file <file>', 'pseudonym key; made on first use (default: $SERVICE_DATA_DIR/offline-pseudonym.key)')
    .option('--rules <file>', 'scrub rules as JSON, in the shape of the tenant setting scrub_rules')
    .option('--upstream <url>', 'upstream URL recorded in each entry', 'unknown')
    .action((opts: Options) => transition(opts));
}
