import { createHash } from 'node:crypto';
import { newId } from '../../../kernel/ids.js';
import type { MockEntry } from '../../../kernel/domain/index.js';
import type { Store, TenantTx } from '../connection.js';
import type { ChangeFeed } from './change-versions.js';
import { iso, isoOrNull, json, type Page } from './rows.js';

/** What it takes to make an entry; the rest is filled in. */
export type MockInput = Omit<MockEntry, 'id' | 'created_at' | 'last_hit_at' | 'hit_count' | 'uri_template' | 'origin'> & { uri_template?: string; origin?: string | null };

/** What an upsert did. */
export interface UpsertOutcome {
  /** The id of each input's entry, in input order (an input that repeats an earlier one has the same id). */
  ids: string[];
  created: number;
  updated: number;
}

/** JSON with object keys sorted, so equal values give equal text. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v,
  );
}

/**
 * The natural key of an entry: what request it answers (service, method, path, query, body
 * matcher) and with which status. Two inputs with the same key are the same entry.
 * @public
 */
export function matchKey(m: Pick<MockInput, 'service_id' | 'method' | 'path' | 'query' | 'body_matcher' | 'response'>): string {
  return keyOf(m, [m.response.status]);
}

/** What request an entry answers (its {@link matchKey} without the status). */
function requestKey(m: Pick<MockInput, 'service_id' | 'method' | 'path' | 'query' | 'body_matcher'>): string {
  return keyOf(m, []);
}

function keyOf(m: Pick<MockInput, 'service_id' | 'method' | 'path' | 'query' | 'body_matcher'>, status: number[]): string {
  const query = m.query ? Object.fromEntries(Object.entries(m.query).map(([k, v]) => [k, [...v].sort()])) : null;
  return createHash('sha256')
    .update(canonical([m.service_id, m.method.toUpperCase(), m.path, query, m.body_matcher, ...status]))
    .digest('base64url');
}

function toEntry(r: Record<string, unknown>): MockEntry {
  return {
    id: String(r.id),
    service_id: String(r.service_id),
    service_upstream_id: String(r.service_upstream_id),
    method: String(r.method),
    path: String(r.path),
    uri_template: String(r.uri_template),
    query: json<MockEntry['query']>(r.query) ?? null,
    body_matcher: json<MockEntry['body_matcher']>(r.body_matcher) ?? null,
    response: { status: Number(r.response_status), headers: json(r.response_headers) ?? {}, body: json<MockEntry['response']['body']>(r.response_body) ?? null },
    source: String(r.source),
    origin: r.origin === null || r.origin === undefined ? null : String(r.origin),
    scrubbed: Boolean(r.scrubbed),
    created_at: iso(r.created_at),
    last_hit_at: isoOrNull(r.last_hit_at),
    hit_count: Number(r.hit_count),
  };
}

/**
 * The mock library of one tenant. Every write bumps the `library` topic, so agents reload
 * (at once in this process, within a second in others).
 * @public
 */
export class MocksRepo {
  constructor(
    private readonly store: Store,
    private readonly changes: ChangeFeed,
  ) {}

  /**
   * Writes entries by their natural key ({@link matchKey}) in one transaction, all or nothing: a
   * new key is created, a known one has its answer, template, source and origin replaced (its id,
   * creation time and hit counts stay). Pass `trx` to join a larger transaction.
   */
  async upsertMany(tenant: string, inputs: readonly MockInput[], trx?: TenantTx): Promise<UpsertOutcome> {
    if (!trx) return this.store.withTenant(tenant, (t) => this.upsertMany(tenant, inputs, t));
    const now = new Date();
    // Later inputs with the same key win, as a re-recorded exchange would.
    const byKey = new Map<string, Record<string, unknown>>();
    const keys = inputs.map((m) => {
      const key = matchKey(m);
      byKey.set(key, {
        id: newId('mock'),
        tenant,
        match_key: key,
        service_id: m.service_id,
        service_upstream_id: m.service_upstream_id,
        method: m.method.toUpperCase(),
        path: m.path,
        uri_template: m.uri_template ?? m.path,
        query: m.query === null ? null : JSON.stringify(m.query),
        body_matcher: m.body_matcher === null ? null : JSON.stringify(m.body_matcher),
        response_status: m.response.status,
        response_headers: JSON.stringify(m.response.headers),
        response_body: m.response.body === null ? null : JSON.stringify(m.response.body),
        source: m.source,
        origin: m.origin ?? null,
        scrubbed: m.scrubbed,
        created_at: now,
        hit_count: 0,
      });
      return key;
    });
    const rows = [...byKey.values()];
    const written = new Map<string, string>();
    let created = 0;
    for (let i = 0; i < rows.length; i += 500) {
      const out = (await trx('mocks')
        .insert(rows.slice(i, i + 500))
        .onConflict(['tenant', 'match_key'])
        .merge(['service_upstream_id', 'uri_template', 'response_status', 'response_headers', 'response_body', 'source', 'origin', 'scrubbed'])
        .returning(['id', 'match_key', trx.raw('(xmax = 0) AS inserted')])) as { id: string; match_key: string; inserted: boolean }[];
      for (const r of out) {
        if (r.inserted) created++;
        written.set(r.match_key, r.id);
      }
    }
    if (rows.length) await this.changes.bump(trx, tenant, 'library');
    return { ids: keys.map((k) => written.get(k)!), created, updated: rows.length - created };
  }

  /**
   * In `trx`: deletes the service's `recorded` entries that answer the same request as one of
   * `kept` (method, path, query and body matchers) with another status, so a request re-recorded
   * with a new status is not answered by its stale one as well. Entries of other sources (imports)
   * stay. Returns how many went.
   */
  async deleteSuperseded(tenant: string, serviceId: string, kept: readonly MockInput[], trx: TenantTx): Promise<number> {
    const requests = new Set(kept.map(requestKey));
    const keys = new Set(kept.map(matchKey));
    const rows = (await trx('mocks').where({ tenant, service_id: serviceId, source: 'recorded' }).select('id', 'match_key', 'method', 'path', 'query', 'body_matcher')) as Record<string, unknown>[];
    const stale = rows
      .filter((r) => !keys.has(String(r.match_key)) && requests.has(requestKey({ service_id: serviceId, method: String(r.method), path: String(r.path), query: json<MockEntry['query']>(r.query) ?? null, body_matcher: json<MockEntry['body_matcher']>(r.body_matcher) ?? null })))
      .map((r) => String(r.id));
    return this.#deleteIds(tenant, stale, trx);
  }

  /** In `trx`: deletes the entries of services that no longer exist (SPEC: they stay until the next transition). Returns how many went. */
  async deleteOfDeletedServices(tenant: string, trx: TenantTx): Promise<number> {
    const gone = await trx('mocks').where({ tenant }).whereNotIn('service_id', trx('services').where({ tenant }).select('id')).delete().returning('id');
    if (gone.length) await this.changes.bump(trx, tenant, 'library');
    return gone.length;
  }

  async #deleteIds(tenant: string, ids: readonly string[], trx: TenantTx): Promise<number> {
    for (let i = 0; i < ids.length; i += 500) await trx('mocks').whereIn('id', ids.slice(i, i + 500)).delete();
    if (ids.length) await this.changes.bump(trx, tenant, 'library');
    return ids.length;
  }

  async all(tenant: string): Promise<MockEntry[]> {
    const rows = await this.store.withTenant(tenant, (trx) => trx('mocks').select('*').orderBy([{ column: 'created_at' }, { column: 'id' }]));
    return rows.map(toEntry);
  }

  async page(tenant: string, limit: number, offset: number, filter: { method?: string; service_id?: string } = {}): Promise<Page<MockEntry>> {
    return this.store.withTenant(tenant, async (trx) => {
      const base = () => {
        const q = trx('mocks');
        if (filter.method) q.where({ method: filter.method.toUpperCase() });
        if (filter.service_id) q.where({ service_id: filter.service_id });
        return q;
      };
      const [rows, [{ count }]] = await Promise.all([base().select('*').orderBy([{ column: 'created_at' }, { column: 'id' }]).limit(limit).offset(offset), base().count({ count: '*' })]);
      return { data: rows.map(toEntry), total: Number(count) };
    });
  }

  /** Adds hit counts gathered by an agent since its last flush. */
  async recordHits(tenant: string, hits: ReadonlyMap<string, { count: number; at: Date }>): Promise<void> {
    if (!hits.size) return;
    await this.store.withTenant(tenant, async (trx) => {
      for (const [id, { count, at }] of hits) {
        await trx('mocks').where({ id }).update({ hit_count: trx.raw('hit_count + ?', [count]), last_hit_at: at });
      }
    });
  }

  async remove(tenant: string, id: string): Promise<boolean> {
    return this.store.withTenant(tenant, async (trx) => {
      const gone = await trx('mocks').where({ id }).delete().returning('id');
      if (gone.length) await this.changes.bump(trx, tenant, 'library');
      return gone.length > 0;
    });
  }

  /**
   * Every entry matching the filter, a page at a time in creation order (keyset pagination, one
   * short transaction per page), so an export never holds the whole library.
   */
  async *each(tenant: string, filter: { service_id?: string; scrubbed?: boolean } = {}, pageSize = 1000): AsyncIterable<MockEntry[]> {
    let after: [Date | string, string] | null = null;
    for (;;) {
      const cursor = after;
      const rows = await this.store.withTenant(tenant, (trx) => {
        const q = trx('mocks').select('*');
        if (filter.service_id) q.where({ service_id: filter.service_id });
        if (filter.scrubbed !== undefined) q.where({ scrubbed: filter.scrubbed });
        if (cursor) q.whereRaw('(created_at, id) > (?, ?)', cursor);
        return q.orderBy([{ column: 'created_at' }, { column: 'id' }]).limit(pageSize);
      });
      if (!rows.length) return;
      yield rows.map(toEntry);
      const last = rows[rows.length - 1]!;
      after = [last.created_at as Date | string, String(last.id)];
      if (rows.length < pageSize) return;
    }
  }

  /** Deletes the tenant's entries (of one service when given); returns how many. */
  async clear(tenant: string, filter: { service_id?: string } = {}): Promise<number> {
    return this.store.withTenant(tenant, async (trx) => {
      const q = trx('mocks');
      if (filter.service_id) q.where({ service_id: filter.service_id });
      const gone = await q.delete().returning('id');
      await this.changes.bump(trx, tenant, 'library');
      return gone.length;
    });
  }
}
