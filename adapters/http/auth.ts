import { timingSafeEqual } from 'node:crypto';
import type { ApiKeysRepo, ActiveKey } from '../store/repositories/api-keys.js';
import { hashDigest } from '../store/repositories/api-keys.js';
import { TopicCache, type ChangeFeed } from '../store/repositories/change-versions.js';
import type { SessionsRepo } from '../store/repositories/sessions.js';

/**
 * Checks API keys and session cookies. Active key hashes are cached in memory and reloaded when
 * the `api_keys` topic changes (at once in this process, within a second in others), so a check
 * costs one SHA-256 and a map lookup, not a query.
 * @public
 */
export class Authenticator {
  readonly #keys: TopicCache<Map<string, ActiveKey & { digest: Buffer }>>;
  /**
   * The key last verified on each keep-alive connection. A repeat of the same header on the same
   * connection skips the hash, as long as the key set is unchanged. It only ever compares a
   * header with what that same connection sent before, so it tells a caller nothing new.
   */
  readonly #byConnection = new WeakMap<object, { raw: string; key: ActiveKey; keys: Map<string, unknown> }>();

  constructor(
    private readonly tenant: string,
    apiKeys: ApiKeysRepo,
    private readonly sessions: SessionsRepo,
    changes: ChangeFeed,
  ) {
    this.#keys = new TopicCache(changes, 'api_keys', async (t) => new Map((await apiKeys.active(t)).map((k) => [k.hash, { ...k, digest: Buffer.from(k.hash, 'hex') }])));
  }

  /** The key behind a raw API key, or null when it is unknown or revoked. `connection` enables the per-connection memo. */
  async verifyKey(raw: string, connection?: object): Promise<ActiveKey | null> {
    if (raw.length < 8 || raw.length > 200) return null;
    const keys = this.#keys.peek(this.tenant) ?? (await this.#keys.get(this.tenant));
    const memo = connection && this.#byConnection.get(connection);
    if (memo && memo.keys === keys && memo.raw === raw) return memo.key;
    const digest = hashDigest(raw);
    const found = keys.get(digest.toString('hex'));
    // The map lookup found it by hash; compare again in constant time all the same.
    if (!found || !timingSafeEqual(found.digest, digest)) return null;
    if (connection) this.#byConnection.set(connection, { raw, key: found, keys });
    return found;
  }

  /** The key behind a session cookie, or null when the session or its key is gone. */
  async verifySession(token: string): Promise<ActiveKey | null> {
    if (token.length < 16 || token.length > 200) return null;
    const keyId = await this.sessions.find(this.tenant, token);
    if (!keyId) return null;
    for (const key of (await this.#keys.get(this.tenant)).values()) if (key.id === keyId) return key;
    return null;
  }
}
