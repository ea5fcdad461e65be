import type { Service } from '../kernel/domain/index.js';
import { AppError } from '../kernel/errors.js';
import type { Kernel } from '../kernel/kernel.js';
import { definePipeline, type Importer, type ImportSkip, type MockDraft } from '../kernel/public.js';
import type { Store } from '../adapters/store/connection.js';
import { matchKey, type MockInput, type MocksRepo } from '../adapters/store/repositories/mocks.js';

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
}

/** What a seed run needs from the runtime. */
export interface SeedDeps {
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

  constructor(format: string) {
    this.report = { format, created: 0, updated: 0, duplicates: 0, skipped: [], skipped_total: 0, warnings: [] };
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
 * The seed pipeline: drafts from an importer are bound to their service (`bind`) and written by
 * natural key (`write`), batch by batch, inside one transaction: a document that fails anywhere
 * leaves the library as it was. Built per run, because its stages close over the run's state.
 */
function seedPipeline(bind: (draft: MockDraft) => MockInput | null, write: (batch: MockInput[]) => Promise<MockInput[]>) {
  return definePipeline({
    name: 'seed',
    batchSize: BATCH,
    stages: [
      { name: 'bind', input: 'mock-draft', output: 'mock-input', run: (batch) => (batch as MockDraft[]).map(bind).filter((m): m is MockInput => m !== null) },
      { name: 'write', input: 'mock-input', output: 'mock-input', run: (batch) => write(batch as MockInput[]) },
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
  const reporter = new Reporter(importer.format);
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
      scrubbed: !importer.captured,
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
    const pipeline = seedPipeline(bind, write);
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
