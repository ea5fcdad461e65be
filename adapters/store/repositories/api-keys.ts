import { hash } from 'node:crypto';
import { newId, randomBase62 } from '../../../kernel/ids.js';
import type { ApiKeyInfo } from '../../../kernel/domain/index.js';
import type { Store } from '../connection.js';
import type { ChangeFeed } from './change-versions.js';
import { iso, isoOrNull, type Page } from './rows.js';

/** Keys are `usk_` + 40 base62 characters. */
export const API_KEY_RE = /^usk_[0-9A-Za-z]{40}$/;
const PREFIX_LENGTH = 12;

/** SHA-256 of a raw key, hex. Only this is stored. */
export function hashSecret(raw: string): string {
  return hash('sha256', raw, 'hex');
}

/** SHA-256 of a raw key as bytes, for constant-time comparison. */
export function hashDigest(raw: string): Buffer {
  return hash('sha256', raw, 'buffer');
}

/** A fresh raw key. */
export function generateRawApiKey(): string {
  return `usk_${randomBase62(40)}`;
}

function toInfo(row: Record<string, unknown>): ApiKeyInfo {
  return {
    id: String(row.id),
    prefix: String(row.prefix),
    name: (row.name as string | null) ?? null,
    created_at: iso(row.created_at),
    last_used_at: isoOrNull(row.last_used_at),
    revoked_at: isoOrNull(row.revoked_at),
  };
}

/** An active key as the auth layer holds it. */
export interface ActiveKey {
  id: string;
  hash: string;
  prefix: string;
}

/** API keys of one tenant: only SHA-256 hashes are stored. @public */
export class ApiKeysRepo {
  constructor(
    private readonly store: Store,
    private readonly changes: ChangeFeed,
  ) {}

  /** Stores a key (a raw one given, or a fresh one) and returns the raw key once. */
  async create(tenant: string, opts: { name?: string | null; raw?: string } = {}): Promise<{ raw: string; key: ApiKeyInfo }> {
    const raw = opts.raw ?? generateRawApiKey();
    if (!API_KEY_RE.test(raw)) throw new Error('an API key must be usk_ followed by 40 letters and digits');
    const row = { id: newId('key'), tenant, prefix: raw.slice(0, PREFIX_LENGTH), key_hash: hashSecret(raw), name: opts.name ?? null, created_at: new Date() };
    await this.store.withTenant(tenant, async (trx) => {
      await trx('api_keys').insert(row);
      await this.changes.bump(trx, tenant, 'api_keys');
    });
    return { raw, key: toInfo(row) };
  }

  /** Registers `raw` unless its hash is already known; true when it was added. */
  async ensure(tenant: string, raw: string, name: string): Promise<boolean> {
    const known = await this.store.withTenant(tenant, (trx) => trx('api_keys').where({ key_hash: hashSecret(raw) }).first('id'));
    if (known) return false;
    await this.create(tenant, { raw, name });
    return true;
  }

  async page(tenant: string, limit: number, offset: number): Promise<Page<ApiKeyInfo>> {
    return this.store.withTenant(tenant, async (trx) => {
      const [rows, [{ count }]] = await Promise.all([
        trx('api_keys').select('id', 'prefix', 'name', 'created_at', 'last_used_at', 'revoked_at').orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id' }]).limit(limit).offset(offset),
        trx('api_keys').count({ count: '*' }),
      ]);
      return { data: rows.map(toInfo), total: Number(count) };
    });
  }

  async count(tenant: string): Promise<number> {
    const [{ count }] = await this.store.withTenant(tenant, (trx) => trx('api_keys').count({ count: '*' }));
    return Number(count);
  }

  /** Every key not revoked, for the auth cache. */
  async active(tenant: string): Promise<ActiveKey[]> {
    const rows = await this.store.withTenant(tenant, (trx) => trx('api_keys').whereNull('revoked_at').select('id', 'key_hash', 'prefix'));
    return rows.map((r: Record<string, unknown>) => ({ id: String(r.id), hash: String(r.key_hash), prefix: String(r.prefix) }));
  }

  async revoke(tenant: string, id: string): Promise<void> {
    await this.store.withTenant(tenant, async (trx) => {
      await trx('api_keys').where({ id }).whereNull('revoked_at').update({ revoked_at: new Date() });
      await this.changes.bump(trx, tenant, 'api_keys');
    });
  }

  /** Records use, at most once a minute per key (a cheap conditional update). */
  async touch(tenant: string, id: string): Promise<void> {
    await this.store.withTenant(tenant, (trx) =>
      trx('api_keys')
        .where({ id })
        .andWhere((q) => q.whereNull('last_used_at').orWhere('last_used_at', '<', new Date(Date.now() - 60_000)))
        .update({ last_used_at: new Date() }),
    );
  }
}
