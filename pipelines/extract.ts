import type { EndpointPatterns, ExchangeRecord, PatternExtractor, StageContext, TemplateExtractor } from '../kernel/public.js';

/** A record with the URI template the extractors agreed on. */
export interface TemplatedRecord extends ExchangeRecord {
  uri_template: string;
}

/** One endpoint (method and template) of a service: what the traffic says about it, and its records. */
export interface Endpoint {
  patterns: EndpointPatterns;
  records: TemplatedRecord[];
}

const isParam = (s: string) => /^\{[^}]+\}$/.test(s);

/**
 * A record's template from every template extractor's opinion: extractors can only add
 * parameters, so a segment is a parameter when any of them says so (named by the first that
 * does). A template that does not fit the path (another segment count, other literals) is
 * ignored with a warning.
 */
export function combineTemplates(path: string, opinions: readonly (string | null)[], warn: (text: string) => void): string {
  const segments = path.split('/');
  const out = [...segments];
  const named = new Set<number>();
  for (const t of opinions) {
    if (t === null) continue;
    const parts = t.split('/');
    if (parts.length !== segments.length || parts.some((p, i) => !isParam(p) && p !== segments[i])) {
      warn(`a template extractor answered '${t}' for a path it does not fit; ignored`);
      continue;
    }
    parts.forEach((p, i) => {
      if (isParam(p) && !named.has(i)) {
        named.add(i);
        out[i] = p;
      }
    });
  }
  return out.join('/');
}

const emptyPatterns = (method: string, uri_template: string, samples: number): EndpointPatterns => ({ method, uri_template, samples, query: {}, request_schema: null, response_schemas: {} });

/**
 * The extract stage: every record of one service at once. Template extractors run first (in
 * boot order) and their templates are combined; then pattern extractors see the records with
 * those templates, and their patterns are merged per endpoint (the first to say something about
 * a query parameter or schema wins).
 */
export function extractEndpoints(extractors: readonly (TemplateExtractor | PatternExtractor)[], records: readonly ExchangeRecord[], ctx: Pick<StageContext, 'message'>): Endpoint[] {
  const warn = (text: string) => ctx.message('warning', text);
  const opinions = extractors.filter((e): e is TemplateExtractor => e.produces === 'uri_template').map((e) => e.extract(records));
  const templates = records.map((r, i) => {
    const q = r.request.uri.indexOf('?');
    return combineTemplates(q === -1 ? r.request.uri : r.request.uri.slice(0, q), opinions.map((o) => o[i] ?? null), warn);
  });
  const endpoints = new Map<string, Endpoint>();
  records.forEach((r, i) => {
    const key = `${r.request.method} ${templates[i]}`;
    let e = endpoints.get(key);
    if (!e) endpoints.set(key, (e = { patterns: emptyPatterns(r.request.method, templates[i]!, 0), records: [] }));
    e.records.push({ ...r, uri_template: templates[i]! });
    e.patterns.samples++;
  });
  for (const extractor of extractors) {
    if (extractor.produces !== 'patterns') continue;
    for (const found of extractor.extract(records, templates)) {
      const e = endpoints.get(`${found.method} ${found.uri_template}`);
      if (!e) {
        warn(`a pattern extractor described ${found.method} ${found.uri_template}, which no record has; ignored`);
        continue;
      }
      const p = e.patterns;
      p.query = { ...found.query, ...p.query };
      p.request_schema ??= found.request_schema;
      p.response_schemas = { ...found.response_schemas, ...p.response_schemas };
    }
  }
  return [...endpoints.values()];
}
