import type { TrafficRecord, WebhookCapture } from '../../../kernel/domain/index.js';
import type { Store } from '../connection.js';
import type { ChangeFeed } from './change-versions.js';
import { iso, json, type Page } from './rows.js';

/** One unmatched request shape, as the agent counts it. */
export interface UnmatchedRow {
  service_id: string;
  method: string;
  path: string;
  query: string;
  count: number;
  first_seen_at: string;
  last_seen_at: string;
  hint: unknown;
}

/** Filters of `GET /v1/traffic`. */
export interface TrafficFilter {
  service_id?: string;
  method?: string;
  path_prefix?: string;
  status?: number;
  since?: string;
  until?: string;
}

/**
 * What the agent produces, in the database: imported traffic and webhook lines (idempotent by
 * id) and the unmatched-request counts.
 * @public
 */
export class AgentDataRepo {
  constructor(
    private readonly store: Store,
    private readonly changes: ChangeFeed,
  ) {}

  /**
   * Removes a capture from the database only. The `webhooks` topic moves, so the sync layer
   * re-reads the webhook files and a capture whose line remains comes back (SPEC replay rule 5).
   */
  async deleteWebhook(tenant: string, serviceId: string, id: string): Promise<boolean> {
    return this.store.withTenant(tenant, async (trx) => {
      const gone = await trx('webhooks').where({ id, service_id: serviceId }).delete().returning('id');
      if (gone.length) await this.changes.bump(trx, tenant, 'webhooks');
      return gone.length > 0;
    });
  }

  /** Captures of a service, newest first, optionally of one signature kind. */
  async webhookPage(tenant: string, serviceId: string, limit: number, offset: number, kind?: WebhookCapture['signature_kind']): Promise<Page<WebhookCapture>> {
    return this.store.withTenant(tenant, async (trx) => {
      const base = () => {
        const q = trx('webhooks').where({ service_id: serviceId });
        if (kind) q.where({ signature_kind: kind });
        return q;
      };
      const [rows, [{ count }]] = await Promise.all([
        base().select('record').orderBy([{ column: 'received_at', order: 'desc' }, { column: 'id', order: 'desc' }]).limit(limit).offset(offset),
        base().count({ count: '*' }),
      ]);
      return { data: rows.map((r: { record: unknown }) => json<WebhookCapture>(r.record)), total: Number(count) };
    });
  }

  /** One capture of a service, or null (also when another tenant owns it: RLS hides it). */
  async webhook(tenant: string, serviceId: string, id: string): Promise<WebhookCapture | null> {
    const row = await this.store.withTenant(tenant, (trx) => trx('webhooks').where({ id, service_id: serviceId }).first('record'));
    return row ? json<WebhookCapture>(row.record) : null;
  }

  /** Inserts traffic records; ones already present (same id) are skipped. Returns how many were new. */
  async importTraffic(tenant: string, records: readonly TrafficRecord[]): Promise<number> {
    if (!records.length) return 0;
    const rows = records.map((r) => ({ id: r.id, tenant, service_id: r.service_id, recorded_at: new Date(r.recorded_at), method: r.request.method, path: r.request.uri.split('?')[0], status: r.response?.status ?? null, record: JSON.stringify(r) }));
    return this.store.withTenant(tenant, async (trx) => {
      let added = 0;
      for (let i = 0; i < rows.length; i += 500) added += (await trx('traffic').insert(rows.slice(i, i + 500)).onConflict('id').ignore().returning('id')).length;
      return added;
    });
  }

  async importWebhooks(tenant: string, captures: readonly WebhookCapture[]): Promise<number> {
    if (!captures.length) return 0;
    const rows = captures.map((c) => ({ id: c.id, tenant, service_id: c.service_id, received_at: new Date(c.received_at), signature_kind: c.signature_kind, record: JSON.stringify(c) }));
    return this.store.withTenant(tenant, async (trx) => {
      let added = 0;
      for (let i = 0; i < rows.length; i += 500) added += (await trx('webhooks').insert(rows.slice(i, i + 500)).onConflict('id').ignore().returning('id')).length;
      return added;
    });
  }

  async trafficPage(tenant: string, limit: number, offset: number, f: TrafficFilter): Promise<Page<TrafficRecord>> {
    return this.store.withTenant(tenant, async (trx) => {
      const base = () => {
        const q = trx('traffic');
        if (f.service_id) q.where({ service_id: f.service_id });
        if (f.method) q.where({ method: f.method.toUpperCase() });
        if (f.status !== undefined) q.where({ status: f.status });
        if (f.path_prefix) q.whereRaw('left(path, ?) = ?', [f.path_prefix.length, f.path_prefix]);
        if (f.since) q.where('recorded_at', '>=', new Date(f.since));
        if (f.until) q.where('recorded_at', '<', new Date(f.until));
        return q;
      };
      const [rows, [{ count }]] = await Promise.all([
        base().select('record').orderBy([{ column: 'recorded_at', order: 'desc' }, { column: 'id', order: 'desc' }]).limit(limit).offset(offset),
        base().count({ count: '*' }),
      ]);
      return { data: rows.map((r: { record: unknown }) => json<TrafficRecord>(r.record)), total: Number(count) };
    });
  }

  /** Every imported traffic record of a service, oldest first (what a transition reads). */
  async trafficOfService(tenant: string, serviceId: string): Promise<TrafficRecord[]> {
    const rows = await this.store.withTenant(tenant, (trx) => trx('traffic').where({ service_id: serviceId }).select('record').orderBy([{ column: 'recorded_at' }, { column: 'id' }]));
    return rows.map((r: { record: unknown }) => json<TrafficRecord>(r.record));
  }

  /** Adds counts the agent gathered since its last flush. */
  async addUnmatched(tenant: string, rows: readonly UnmatchedRow[]): Promise<void> {
    if (!rows.length) return;
    await this.store.withTenant(tenant, async (trx) => {
      for (const r of rows) {
        await trx('unmatched_requests')
          .insert({ tenant, service_id: r.service_id, method: r.method, path: r.path, query: r.query, count: r.count, first_seen_at: new Date(r.first_seen_at), last_seen_at: new Date(r.last_seen_at), hint: JSON.stringify(r.hint) })
          .onConflict(['tenant', 'service_id', 'method', 'path', 'query'])
          .merge({ count: trx.raw('unmatched_requests.count + excluded.count'), last_seen_at: trx.raw('excluded.last_seen_at'), hint: trx.raw('excluded.hint') });
      }
    });
  }

  async unmatchedPage(tenant: string, limit: number, offset: number, serviceId?: string): Promise<Page<UnmatchedRow>> {
    return this.store.withTenant(tenant, async (trx) => {
      const base = () => (serviceId ? trx('unmatched_requests').where({ service_id: serviceId }) : trx('unmatched_requests'));
      const [rows, [{ count }]] = await Promise.all([
        base().select('*').orderBy([{ column: 'last_seen_at', order: 'desc' }, { column: 'path' }]).limit(limit).offset(offset),
        base().count({ count: '*' }),
      ]);
      return {
        data: rows.map((r: Record<string, unknown>) => ({ service_id: String(r.service_id), method: String(r.method), path: String(r.path), query: String(r.query), count: Number(r.count), first_seen_at: iso(r.first_seen_at), last_seen_at: iso(r.last_seen_at), hint: json(r.hint) })),
        total: Number(count),
      };
    });
  }

  async allUnmatched(tenant: string): Promise<UnmatchedRow[]> {
    return (await this.unmatchedPage(tenant, 100_000, 0)).data;
  }
}
