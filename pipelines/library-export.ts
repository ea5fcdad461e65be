import { mergeTenantConfig } from '../kernel/config.js';
import { decodeBody, type MockEntry, type RecordedBody, type Service } from '../kernel/domain/index.js';
import { AppError } from '../kernel/errors.js';
import type { MocksRepo } from '../adapters/store/repositories/mocks.js';

/** Formats a library leaves in: ours, HAR 1.2 (any HAR reader), WireMock mappings (`POST /__admin/mappings/import`). @public */
export const EXPORT_FORMATS = ['native', 'har', 'wiremock'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** What an export reads. */
export interface ExportDeps {
  tenant: string;
  mocks: MocksRepo;
  services: readonly Service[];
  /** Understudy's version, named as the HAR creator. */
  version: string;
}

export interface ExportOptions {
  format: ExportFormat;
  /** Only entries marked scrubbed (the default of `GET /mocks/export`). */
  scrubbedOnly: boolean;
  serviceId?: string;
}

function headerPairs(headers: MockEntry['response']['headers']): { name: string; value: string }[] {
  return Object.entries(headers).flatMap(([name, v]) => (Array.isArray(v) ? v : [v]).map((value) => ({ name, value })));
}

function contentType(entry: MockEntry): string {
  const v = entry.response.headers['content-type'];
  return (Array.isArray(v) ? v[0] : v) ?? '';
}

function queryString(query: MockEntry['query']): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [k, values] of Object.entries(query)) for (const v of values) params.append(k, v);
  return `?${params}`;
}

function harContent(body: RecordedBody | null, mimeType: string) {
  if (body === null) return { size: 0, mimeType };
  if (typeof body === 'string') return { size: Buffer.byteLength(body), mimeType, text: body };
  return { size: body.size_bytes, mimeType, text: body.b64, encoding: 'base64' };
}

/** One entry as a HAR 1.2 entry; the request URL is the service's upstream plus the entry's path. */
function harEntry(entry: MockEntry): unknown {
  const m = entry.body_matcher;
  const text = m ? ('equals' in m ? m.equals : JSON.stringify(m.json)) : null;
  return {
    startedDateTime: entry.created_at,
    time: 0,
    request: {
      method: entry.method,
      url: `${entry.service_upstream_id}${entry.path}${queryString(entry.query)}`,
      httpVersion: 'HTTP/1.1',
      cookies: [],
      headers: [],
      queryString: Object.entries(entry.query ?? {}).flatMap(([name, values]) => values.map((value) => ({ name, value }))),
      ...(text !== null && { postData: { mimeType: m && 'json' in m ? 'application/json' : 'text/plain', text } }),
      headersSize: -1,
      bodySize: text === null ? 0 : Buffer.byteLength(text),
    },
    response: {
      status: entry.response.status,
      statusText: '',
      httpVersion: 'HTTP/1.1',
      cookies: [],
      headers: headerPairs(entry.response.headers),
      content: harContent(entry.response.body, contentType(entry)),
      redirectURL: '',
      headersSize: -1,
      bodySize: decodeBody(entry.response.body).length,
    },
    cache: {},
    timings: { send: 0, wait: 0, receive: 0 },
    comment: `understudy ${entry.id}${entry.origin ? ` from ${entry.source} ${entry.origin}` : ''}`,
  };
}

/**
 * One entry as a WireMock stub mapping. The request is matched where the agent would have taken
 * it (a path-prefix binding's prefix in front, a hostname binding as `host`), templates as
 * `urlPathTemplate`. Priorities reproduce the agent's choice: exact paths before templates, and
 * among answers to one request the lowest 2xx first.
 */
function wiremockMapping(entry: MockEntry, service: Service | undefined): unknown {
  const prefix = service?.routing_type === 'path_prefix' ? service.routing_value : '';
  const templated = entry.uri_template !== entry.path;
  const status = entry.response.status;
  const m = entry.body_matcher;
  const body = entry.response.body;
  return {
    name: entry.id,
    priority: (templated ? 2000 : 1000) + (status >= 200 && status < 300 ? status - 200 : status),
    request: {
      method: entry.method,
      ...(templated ? { urlPathTemplate: `${prefix}${entry.uri_template}` } : { urlPath: `${prefix}${entry.path}` }),
      ...(service?.routing_type === 'hostname' && { host: { equalTo: service.routing_value } }),
      ...(entry.query && {
        queryParameters: Object.fromEntries(
          Object.entries(entry.query).map(([k, values]) => [k, values.length === 1 ? { equalTo: values[0] } : { hasExactly: values.map((v) => ({ equalTo: v })) }]),
        ),
      }),
      ...(m && { bodyPatterns: ['json' in m ? { equalToJson: m.json } : { equalTo: m.equals }] }),
    },
    response: {
      status,
      headers: entry.response.headers,
      ...(body === null ? {} : typeof body === 'string' ? { body } : { base64Body: body.b64 }),
    },
    metadata: { understudy: { id: entry.id, service_id: entry.service_id, source: entry.source, origin: entry.origin } },
  };
}

/** 409 `scrubbing_required` for an unscrubbed export while the tenant's `require_scrubbing` is on (DECISIONS). @public */
export function assertExportAllowed(scrubbedOnly: boolean, overrides: Record<string, unknown>): void {
  if (!scrubbedOnly && mergeTenantConfig(overrides).require_scrubbing === true) {
    throw new AppError('scrubbing_required', 'this tenant requires scrubbing (config require_scrubbing), so only scrubbed entries can be exported; export scrubbed entries only');
  }
}

/**
 * The library as JSON text, in pieces, a page of entries at a time (shared by `GET /mocks/export`
 * and `understudy export`). It holds only what the entries hold; nothing else is added.
 * @public
 */
export async function* exportLibrary(deps: ExportDeps, opts: ExportOptions): AsyncIterable<string> {
  const services = new Map(deps.services.map((s) => [s.id, s]));
  const [open, close] =
    opts.format === 'har'
      ? [`{"log":{"version":"1.2","creator":{"name":"understudy","version":${JSON.stringify(deps.version)}},"entries":[`, ']}}\n']
      : opts.format === 'wiremock'
        ? ['{"mappings":[', ']}\n']
        : [`{"format":"understudy-library","version":1,"exported_at":"${new Date().toISOString()}","scrubbed_only":${opts.scrubbedOnly},"entries":[`, ']}\n'];
  yield open;
  let first = true;
  const filter = { ...(opts.serviceId && { service_id: opts.serviceId }), ...(opts.scrubbedOnly && { scrubbed: true }) };
  for await (const page of deps.mocks.each(deps.tenant, filter)) {
    const items = page.map((e) => JSON.stringify(opts.format === 'har' ? harEntry(e) : opts.format === 'wiremock' ? wiremockMapping(e, services.get(e.service_id)) : e));
    yield `${first ? '' : ','}${items.join(',')}`;
    first = false;
  }
  yield close;
}
