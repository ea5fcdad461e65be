import { newId } from '../../../kernel/ids.js';
import type { MockEntry } from '../../../kernel/domain/index.js';
import type { Store } from '../connection.js';
import type { ChangeFeed } from './change-versions.js';
import { iso, isoOrNull, json, type Page } from './rows.js';

/** What it takes to make an entry; the rest is filled in. */
export type MockInput = Omit<MockEntry, 'id' | 'created_at' | 'last_hit_at' | 'hit_count' | 'uri_template'> & { uri_template?: string };

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

  /** Inserts entries in one transaction: all or nothing. */
  async createMany(tenant: string, inputs: readonly MockInput[]): Promise<MockEntry[]> {
    const now = new Date();
    const rows = inputs.map((m) => ({
      id: newId('mock'),
      tenant,
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
      scrubbed: m.scrubbed,
      created_at: now,
      hit_count: 0,
    }));
    await this.store.withTenant(tenant, async (trx) => {
      for (let i = 0; i < rows.length; i += 500) await trx('mocks').insert(rows.slice(i, i + 500));
      await this.changes.bump(trx, tenant, 'library');
    });
    return rows.map((r) => toEntry({ ...r, last_hit_at: null }));
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

  async clear(tenant: string): Promise<number> {
    return this.store.withTenant(tenant, async (trx) => {
      const gone = await trx('mocks').delete().returning('id');
      await this.changes.bump(trx, tenant, 'library');
      return gone.length;
    });
  }
}
