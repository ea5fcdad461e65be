import type { Store } from '../connection.js';
import { json } from './rows.js';

const TTL_MS = 24 * 60 * 60 * 1000;

/** What a key lookup finds. */
export type IdempotencyClaim =
  | { state: 'new' }
  | { state: 'done'; status: number; body: unknown; headers: Record<string, string> }
  | { state: 'in_progress' }
  | { state: 'mismatch' };

/**
 * Idempotency records: one per (tenant, key), kept 24 h. `claim` inserts a pending row or finds
 * the existing one; `complete` stores the answer; `release` drops a pending row after a failure
 * so the client may retry.
 * @public
 */
export class IdempotencyRepo {
  constructor(private readonly store: Store) {}

  async claim(tenant: string, key: string, method: string, path: string, requestHash: string): Promise<IdempotencyClaim> {
    return this.store.withTenant(tenant, async (trx) => {
      const now = new Date();
      await trx('idempotency_keys').where({ key }).andWhere('expires_at', '<', now).delete();
      const inserted = await trx('idempotency_keys')
        .insert({ tenant, key, method, path, request_hash: requestHash, created_at: now, expires_at: new Date(now.getTime() + TTL_MS) })
        .onConflict(['tenant', 'key'])
        .ignore()
        .returning('key');
      if (inserted.length) return { state: 'new' };
      const row = await trx('idempotency_keys').where({ key }).first('method', 'path', 'request_hash', 'status', 'response_body', 'response_headers');
      if (!row || row.method !== method || row.path !== path || row.request_hash !== requestHash) return { state: 'mismatch' };
      if (row.status === null || row.status === undefined) return { state: 'in_progress' };
      return { state: 'done', status: Number(row.status), body: json(row.response_body), headers: json<Record<string, string> | null>(row.response_headers) ?? {} };
    });
  }

  /** Stores the answer a repeat will get: status, body and headers. */
  async complete(tenant: string, key: string, answer: { status: number; body: unknown; headers?: Record<string, string> | undefined }): Promise<void> {
    const { status, body, headers } = answer;
    await this.store.withTenant(tenant, (trx) => trx('idempotency_keys').where({ key }).update({ status, response_body: JSON.stringify(body ?? null), response_headers: JSON.stringify(headers ?? {}) }));
  }

  async release(tenant: string, key: string): Promise<void> {
    await this.store.withTenant(tenant, (trx) => trx('idempotency_keys').where({ key }).whereNull('status').delete());
  }
}
