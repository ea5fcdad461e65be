import type { TenantTx } from '../adapters/store/connection.js';
import type { EndpointPatternsRepo } from '../adapters/store/repositories/endpoint-patterns.js';
import type { MockInput, MocksRepo } from '../adapters/store/repositories/mocks.js';
import { UNREPLAYED_HEADERS } from '../kernel/domain/index.js';
import { UNSCRUBBABLE } from '../kernel/scrub/walk.js';
import type { Endpoint } from './extract.js';

/**
 * The query matcher of a scrubbed request URI: its parameters, less the volatile ones and those
 * whose value was scrubbed (a client sends the real value, never the pseudonym); null when none
 * is left (any query matches).
 */
export function queryMatcher(uri: string, volatile: ReadonlySet<string>, scrubbed: ReadonlySet<string>): Record<string, string[]> | null {
  const q = uri.indexOf('?');
  if (q === -1) return null;
  const out: Record<string, string[]> = {};
  for (const [name, value] of new URLSearchParams(uri.slice(q + 1))) {
    if (volatile.has(name) || scrubbed.has(name)) continue;
    (out[name] ??= []).push(value);
  }
  const names = Object.keys(out).sort();
  return names.length ? Object.fromEntries(names.map((n) => [n, out[n]!])) : null;
}

/**
 * Library entries from a service's endpoints: one per distinct request (method, path, query
 * matcher), answered by the latest exchange recorded for it. The query matcher keeps the
 * parameters a client would send again as they were: not the volatile ones (timestamps, nonces),
 * and not those whose value was scrubbed (the real client sends the real value, never the
 * pseudonym). Bodies are not matched: a recorded request body is scrubbed too. An entry whose
 * record has a body the scrubbers could not read (binary, a decompression bomb) is marked
 * `scrubbed: false`, so a scrubbed-only export leaves it out.
 */
export function libraryEntries(service: { id: string; upstream_url: string }, endpoints: readonly Endpoint[]): MockInput[] {
  const entries = new Map<string, MockInput>();
  for (const { patterns, records } of endpoints) {
    const volatile = new Set(Object.entries(patterns.query).filter(([, p]) => p.volatile).map(([name]) => name));
    const ordered = [...records].sort((a, b) => (a.recorded_at < b.recorded_at ? -1 : a.recorded_at > b.recorded_at ? 1 : 0));
    for (const r of ordered) {
      if (!r.response) continue;
      const scrubbed = new Set((r.scrub_findings ?? []).filter((f) => f.path.startsWith('request.query.')).map((f) => f.path.slice('request.query.'.length)));
      const q = r.request.uri.indexOf('?');
      const path = q === -1 ? r.request.uri : r.request.uri.slice(0, q);
      const query = queryMatcher(r.request.uri, volatile, scrubbed);
      const headers = Object.fromEntries(Object.entries(r.response.headers).filter(([name]) => !UNREPLAYED_HEADERS.has(name.toLowerCase())));
      entries.set(`${r.request.method} ${path} ${JSON.stringify(query)}`, {
        service_id: service.id,
        service_upstream_id: service.upstream_url,
        method: r.request.method,
        path,
        uri_template: r.uri_template,
        query,
        body_matcher: null,
        response: { status: r.response.status, headers, body: r.response.body },
        source: 'recorded',
        origin: `traffic:${r.id}`,
        scrubbed: !(r.scrub_findings ?? []).some((f) => f.rule === UNSCRUBBABLE),
      });
    }
  }
  return [...entries.values()];
}

/** What a promotion changed in the library. */
export interface PromoteCounts {
  created: number;
  updated: number;
  /** Recorded entries for a request now recorded with another status. */
  superseded: number;
  /** Entries of services deleted since (SPEC: "sync deletes follow at next transition"). */
  of_deleted_services: number;
}

/**
 * Writes a service's endpoints in `trx` (the caller's transaction, which also ends the job): the
 * library entries upserted by natural key, the recorded entries they supersede and the entries
 * of deleted services deleted, and the service's endpoint patterns replaced.
 */
export async function promoteEndpoints(
  repos: { mocks: MocksRepo; endpointPatterns: EndpointPatternsRepo },
  trx: TenantTx,
  tenant: string,
  service: { id: string; upstream_url: string },
  endpoints: readonly Endpoint[],
): Promise<PromoteCounts> {
  const entries = libraryEntries(service, endpoints);
  const { created, updated } = await repos.mocks.upsertMany(tenant, entries, trx);
  const superseded = await repos.mocks.deleteSuperseded(tenant, service.id, entries, trx);
  const ofDeleted = await repos.mocks.deleteOfDeletedServices(tenant, trx);
  await repos.endpointPatterns.replace(tenant, service.id, endpoints.map((e) => e.patterns), trx);
  return { created, updated, superseded, of_deleted_services: ofDeleted };
}
