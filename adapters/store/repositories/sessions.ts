import { randomBytes } from 'node:crypto';
import type { Store } from '../connection.js';
import { hashSecret } from './api-keys.js';

const TTL_MS = 12 * 60 * 60 * 1000;

/** Dashboard sessions; only a hash of the cookie value is stored. @public */
export class SessionsRepo {
  constructor(private readonly store: Store) {}

  async create(tenant: string, apiKeyId: string): Promise<{ token: string; expires_at: Date }> {
    const token = randomBytes(32).toString('base64url');
    const expires_at = new Date(Date.now() + TTL_MS);
    await this.store.withTenant(tenant, (trx) => trx('sessions').insert({ token_hash: hashSecret(token), tenant, api_key_id: apiKeyId, created_at: new Date(), expires_at }));
    return { token, expires_at };
  }

  /** The api key id behind a live session, or null. */
  async find(tenant: string, token: string): Promise<string | null> {
    const row = await this.store.withTenant(tenant, (trx) => trx('sessions').where({ token_hash: hashSecret(token) }).andWhere('expires_at', '>', new Date()).first('api_key_id'));
    return row ? String(row.api_key_id) : null;
  }

  async remove(tenant: string, token: string): Promise<void> {
    await this.store.withTenant(tenant, (trx) => trx('sessions').where({ token_hash: hashSecret(token) }).delete());
  }
}
