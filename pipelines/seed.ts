import type { ScrubbedRecord } from '../kernel/contracts/index.js';
import { scrubWithAll, type Scrubber } from '../kernel/contracts/scrubber.js';
import type { Service, TrafficRecord } from '../kernel/domain/index.js';
import { AppError } from '../kernel/errors.js';
import type { Kernel } from '../kernel/kernel.js';
import type { StageSpec } from '../kernel/pipeline.js';
import { definePipeline, type Importer, type ImportSkip, type MockDraft } from '../kernel/public.js';
import { UNSCRUBBABLE } from '../kernel/scrub/walk.js';
import type { Store } from '../adapters/store/connection.js';
import { matchKey, type MockInput, type MocksRepo } from '../adapters/store/repositories/mocks.js';
import { queryMatcher } from './promote.js';
import { loadScrubContexts, type ScrubContextDeps } from './scrub-context.js';

/** Drafts per pipeline batch (and per insert statement). */
const BATCH = 500;
/** Skipped items listed in a report; the rest are counted. */
const MAX_LISTED_SKIPS = 1000;
const MAX_LISTED_WARNINGS = 100;

/** What an import did. @public */
export interface ImportReport {
  format: string;
  created: number;
  updated: number;
  /** Exchanges that repeated an earlier one of the same document and collapsed into it (the later answer wins). */
  duplicates: number;
  /** Items left out and why; at most 1,000 are listed, `skipped_total` counts them all. */
  skipped: ImportSkip[];
  skipped_total: number;
  warnings: string[];
  /** Whether the entries went through the scrubbers before they were written. */
  scrubbed: boolean;
  /** What the scrubbers found, by rule (counts, never values); empty when not scrubbed. */
  findings: Record<string, number>;
}

/** What a seed run needs from the runtime. */
export interface SeedDeps extends ScrubContextDeps {
  tenant: string;
  kernel: Kernel;
  store: Store;
  mocks: MocksRepo;
  services: readonly Service[];
}

/** One import: the document as a byte stream and what it is. */
export interface SeedRequest {
  format: string;
  mediaType: string;
  source: AsyncIterable<Uint8Array>;
  /** With `binding: 'service'` importers, required; with `host` ones, narrows the services considered. */
  serviceId?: string;
  /** Document size in bytes when known, for progress. */
  size?: number | null;
  /**
   * Run the entries through the scrubbers (as a transition does recorded traffic) before they
   * are written. Default: true for importers of captured traffic (HAR, Postman), false for
   * descriptions (OpenAPI), whose examples are written by hand.
   */
  scrub?: boolean;
  signal?: AbortSignal;
  onProgress?: (fraction: number) => void;
}

/** The booted importer of a format: 404 naming the installed ones when there is none. @public */
export function importerFor(kernel: Kernel, format: string): Importer {
  const importers = kernel.plugins.ofKind('importer').map((p) => p.instance);
  const found = importers.find((i) => i.format === format);
  if (!found) throw new AppError('not_found', `no importer reads '${format.slice(0, 40)}'; installed: ${importers.map((i) => i.format).join(', ')}`);
  return found;
}

/** 415 unless the importer takes this media type (`+json` in its list takes any `…+json`). @public */
export function checkMediaType(importer: Importer, mediaType: string): void {
  const ok = importer.mediaTypes.some((t) => (t.startsWith('+') ? mediaType.endsWith(t) : mediaType === t));
  if (!ok) throw new AppError('unsupported_media_type', `send a ${importer.format} document as ${importer.mediaTypes.join(', ')} (got ${mediaType || 'no Content-Type'})`);
}

/** Where a service's entries live: its upstream host and base path (`https://api.x.com/v1` → `api.x.com`, `/v1`). */
interface Target {
  service: Service;
  host: string;
  hostname: string | null;
  base: string;
}

function targetOf(service: Service): Target {
  const url = new URL(service.upstream_url);
  return { service, host: url.host.toLowerCase(), hostname: service.routing_type === 'hostname' ? service.routing_value : null, base: url.pathname.replace(/\/+$/, '') };
}

/** `path` relative to `base`, or null when it lies outside. */
function underBase(path: string, base: string): string | null {
  if (!base) return path;
  if (path === base) return '/';
  return path.startsWith(`${base}/`) ? path.slice(base.length) : null;
}

/** Collects what a run reports, with lists capped so a hostile document cannot grow them without bound. */
class Reporter {
  readonly report: ImportReport;
  #moreWarnings = 0;

  constructor(format: string, scrubbed: boolean) {
    this.report = { format, created: 0, updated: 0, duplicates: 0, skipped: [], skipped_total: 0, warnings: [], scrubbed, findings: {} };
  }

  skip = (where: string, why: string): void => {
    if (this.report.skipped_total++ < MAX_LISTED_SKIPS) this.report.skipped.push({ where, why });
  };

  warn = (text: string): void => {
    if (this.report.warnings.length < MAX_LISTED_WARNINGS) this.report.warnings.push(text);
    else this.#moreWarnings++;
  };

  finish(): ImportReport {
    if (this.#moreWarnings) this.report.warnings.push(`… and ${this.#moreWarnings} more warnings`);
    if (this.report.skipped_total > MAX_LISTED_SKIPS) this.report.warnings.push(`${this.report.skipped_total - MAX_LISTED_SKIPS} more skipped items are counted in skipped_total but not listed`);
    return this.report;
  }
}

/** Counts bytes as they pass, for progress. */
async function* counted(source: AsyncIterable<Uint8Array>, size: number | null | undefined, onProgress: ((f: number) => void) | undefined): AsyncIterable<Uint8Array> {
  let seen = 0;
  for await (const chunk of source) {
    seen += chunk.byteLength;
    if (size && onProgress) onProgress(Math.min(1, seen / size));
    yield chunk;
  }
}

/**
 * A bound entry as a traffic record for the scrubbers: its query and body matcher make the
 * request, its answer the response. `id` is its place in the batch.
 */
function asTraffic(m: MockInput, index: number): TrafficRecord {
  const query = m.query ? new URLSearchParams(Object.entries(m.query).flatMap(([name, values]) => values.map((v): [string, string] => [name, v]))).toString() : '';
  const json = m.body_matcher !== null && 'json' in m.body_matcher;
  return {
    id: String(index),
    tenant: '',
    service_id: m.service_id,
    recorded_at: '',
    mode: 'LEARN',
    request: {
      method: m.method,
      uri: query ? `${m.path}?${query}` : m.path,
      headers: json ? { 'content-type': 'application/json' } : {},
      body: m.body_matcher === null ? '' : 'json' in m.body_matcher ? JSON.stringify(m.body_matcher.json) : m.body_matcher.equals,
    },
    response: { status: m.response.status, headers: m.response.headers, body: m.response.body ?? '' },
    timings: { started_at: '', upstream_ms: null, total_ms: 0 },
  };
}

/**
 * The entry with what the scrubbers left of it, as a transition promotes recorded traffic:
 * the scrubbed path and answer; query parameters whose value was scrubbed leave the matcher,
 * and so does a request body in which something was found (a client sends the real value,
 * never the pseudonym). An answer the scrubbers could not read is kept as it was and the entry
 * is marked `scrubbed: false`.
 */
function fromTraffic(m: MockInput, r: ScrubbedRecord): MockInput {
  const findings = r.scrub_findings ?? [];
  if (!findings.length) return m;
  const scrubbedParams = new Set(findings.filter((f) => f.path.startsWith('request.query.')).map((f) => f.path.slice('request.query.'.length)));
  const q = r.request.uri.indexOf('?');
  const path = q === -1 ? r.request.uri : r.request.uri.slice(0, q);
  return {
    ...m,
    path,
    uri_template: m.uri_template === m.path ? path : m.uri_template,
    query: m.query === null ? null : queryMatcher(r.request.uri, new Set(), scrubbedParams),
    body_matcher: findings.some((f) => f.path.startsWith('request.body')) ? null : m.body_matcher,
    response: { status: m.response.status, headers: r.response!.headers, body: m.response.body === null ? null : r.response!.body },
    scrubbed: !findings.some((f) => f.rule === UNSCRUBBABLE),
  };
}

/**
 * The seed pipeline: drafts from an importer are bound to their service (`bind`), scrubbed when
 * asked (`scrub`, every scrubber, as in a transition) and written by natural key (`write`),
 * batch by batch, inside one transaction: a document that fails anywhere leaves the library as
 * it was. Built per run, because its stages close over the run's state.
 */
function seedPipeline(bind: (draft: MockDraft) => MockInput | null, write: (batch: MockInput[]) => Promise<MockInput[]>, scrub: ((records: TrafficRecord[]) => ScrubbedRecord[]) | null) {
  const bindAll = (batch: unknown[]) => (batch as MockDraft[]).map(bind).filter((m): m is MockInput => m !== null);
  const writing: StageSpec = { name: 'write', input: 'mock-input', output: 'mock-input', run: (batch) => write(batch as MockInput[]) };
  if (!scrub) return definePipeline({ name: 'seed', batchSize: BATCH, stages: [{ name: 'bind', input: 'mock-draft', output: 'mock-input', run: bindAll }, writing] });
  // The scrubbers see each bound entry as a record, which comes back by its place in the batch.
  let bound: MockInput[] = [];
  return definePipeline({
    name: 'seed',
    batchSize: BATCH,
    stages: [
      { name: 'bind', input: 'mock-draft', output: 'traffic', run: (batch) => (bound = bindAll(batch)).map(asTraffic) },
      { name: 'scrub', input: 'traffic', output: 'scrubbed', run: (batch) => scrub(batch as TrafficRecord[]) },
      { name: 'unpack', input: 'scrubbed', output: 'mock-input', run: (batch) => (batch as ScrubbedRecord[]).map((r) => fromTraffic(bound[Number(r.id)]!, r)) },
      writing,
    ],
  });
}

/**
 * Imports one document into the tenant's library, all or nothing, and reports what it did.
 * Shared by `POST /v1/seed/{format}` and `understudy import`.
 * @public
 */
export async function runSeed(deps: SeedDeps, req: SeedRequest): Promise<ImportReport> {
  const importer = importerFor(deps.kernel, req.format);
  checkMediaType(importer, req.mediaType);
  if (importer.binding === 'service' && !req.serviceId) {
    throw new AppError('validation_error', `service_id: required for ${importer.format} imports (the document does not say which service it describes)`);
  }
  const chosen = req.serviceId ? deps.services.find((s) => s.id === req.serviceId) : undefined;
  if (req.serviceId && !chosen) throw new AppError('not_found', `service_id: no service ${req.serviceId}; see GET /services`);
  const targets = (chosen ? [chosen] : deps.services).map(targetOf);
  const scrub = req.scrub ?? importer.captured;
  const reporter = new Reporter(importer.format, scrub);
  // Each entry is scrubbed with its own service's rules; read before the import's transaction.
  const contexts = scrub ? await loadScrubContexts(deps, deps.tenant, targets.map((t) => t.service.id)) : null;
  const signal = req.signal ?? new AbortController().signal;

  const bind = (draft: MockDraft): MockInput | null => {
    const draftTemplate = draft.uri_template ?? draft.path;
    let target: Target;
    let path: string;
    let template: string;
    if (importer.binding === 'host') {
      const host = (draft.host ?? '').toLowerCase();
      const hostname = host.replace(/:\d+$/, '');
      const matching = targets.filter((t) => t.host === host || t.hostname === hostname).sort((a, b) => b.base.length - a.base.length);
      const found = matching.find((t) => underBase(draft.path, t.base) !== null);
      if (!found) {
        const why = matching.length
          ? `path ${draft.path.slice(0, 200)} is outside the base path of service ${matching[0]!.service.id} (${matching[0]!.base})`
          : chosen
            ? `host ${host || '(none)'} is not the upstream of service ${chosen.id} (${targets[0]!.host})`
            : `host ${host || '(none)'} matches no service; register one whose upstream_url is on that host, then import again`;
        reporter.skip(draft.origin, why);
        return null;
      }
      target = found;
      path = underBase(draft.path, target.base)!;
      template = underBase(draftTemplate, target.base) ?? path;
    } else {
      // A description's paths may or may not include the upstream's base path: strip it when present.
      target = targets[0]!;
      path = underBase(draft.path, target.base) ?? draft.path;
      template = underBase(draftTemplate, target.base) ?? draftTemplate;
    }
    return {
      service_id: target.service.id,
      service_upstream_id: target.service.upstream_url,
      method: draft.method.toUpperCase(),
      path,
      uri_template: template,
      query: draft.query,
      body_matcher: draft.body_matcher,
      response: draft.response,
      source: importer.format,
      origin: draft.origin,
      scrubbed: scrub || !importer.captured,
    };
  };

  const report = reporter.report;
  const seen = new Set<string>();
  return deps.store.withTenant(deps.tenant, async (trx) => {
    const write = async (batch: MockInput[]) => {
      const outcome = await deps.mocks.upsertMany(deps.tenant, batch, trx);
      const keys = new Set(batch.map(matchKey));
      // Keys written earlier in this same document count as duplicates, not as updates.
      let again = 0;
      for (const k of keys) if (seen.has(k)) again++;
      for (const k of keys) seen.add(k);
      report.created += outcome.created;
      report.updated += outcome.updated - again;
      report.duplicates += batch.length - keys.size + again;
      return [];
    };
    // In this thread, every scrubber in one walk of each record (as POST /v1/scrub/test): a seed
    // runs one batch at a time, so the worker pool would add a copy each way and a heap per
    // thread for no parallelism (measured: the 100 MB HAR took 13.5 s and 338 MiB through the
    // pool, 9.3 s and 256 MiB without, on PostgreSQL).
    const scrubbers = deps.kernel.plugins.ofKind('scrubber').map((p) => p.instance as Scrubber);
    const scrubAll = (records: TrafficRecord[]): ScrubbedRecord[] => {
      const byService = new Map<string, TrafficRecord[]>();
      for (const r of records) (byService.get(r.service_id) ?? byService.set(r.service_id, []).get(r.service_id)!).push(r);
      const out = [...byService].flatMap(([id, group]) => scrubWithAll(scrubbers, group, contexts!.get(id)!));
      for (const r of out) for (const f of r.scrub_findings ?? []) report.findings[f.rule] = (report.findings[f.rule] ?? 0) + 1;
      return out;
    };
    const pipeline = seedPipeline(bind, write, contexts ? scrubAll : null);
    let batch: MockDraft[] = [];
    const source = counted(req.source, req.size, req.onProgress);
    for await (const draft of importer.read(source, { mediaType: req.mediaType, signal, skip: reporter.skip, warn: reporter.warn })) {
      batch.push(draft);
      if (batch.length >= BATCH) {
        await deps.kernel.pipelines.run(pipeline, batch, { signal });
        batch = [];
      }
    }
    if (batch.length) await deps.kernel.pipelines.run(pipeline, batch, { signal });
    req.onProgress?.(1);
    return reporter.finish();
  });
}
