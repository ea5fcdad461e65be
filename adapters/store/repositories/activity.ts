import { newId } from '../../../kernel/ids.js';
import type { ActivityRecord } from '../../../kernel/domain/index.js';
import type { Store } from '../connection.js';
import { iso, json, type Page } from './rows.js';

export type ActivityInput = Omit<ActivityRecord, 'id' | 'at'>;

/** The activity log: one record per mutating call. @public */
export class ActivityRepo {
  constructor(private readonly store: Store) {}

  async record(tenant: string, input: ActivityInput): Promise<void> {
    await this.store.withTenant(tenant, (trx) => trx('activity').insert({ id: newId('act'), tenant, at: new Date(), ...input, detail: JSON.stringify(input.detail) }));
  }

  async page(tenant: string, limit: number, offset: number, filter: { action?: string } = {}): Promise<Page<ActivityRecord>> {
    return this.store.withTenant(tenant, async (trx) => {
      const base = () => (filter.action ? trx('activity').where({ action: filter.action }) : trx('activity'));
      const [rows, [{ count }]] = await Promise.all([
        base().select('id', 'at', 'actor', 'action', 'method', 'path', 'status', 'request_id', 'detail').orderBy([{ column: 'at', order: 'desc' }, { column: 'id', order: 'desc' }]).limit(limit).offset(offset),
        base().count({ count: '*' }),
      ]);
      return {
        data: rows.map((r: Record<string, unknown>) => ({ ...(r as unknown as ActivityRecord), at: iso(r.at), detail: json<Record<string, unknown>>(r.detail) })),
        total: Number(count),
      };
    });
  }
}
