import { EventEmitter } from 'node:events';
import type { Store, TenantTx } from '../connection.js';

/** Topics whose changes caches follow. */
export type ChangeTopic = 'services' | 'api_keys' | 'config' | 'mode' | 'library' | 'webhooks';

/**
 * Version counters per (tenant, topic). A write bumps its topic in the same transaction; caches
 * compare versions. In one process the bump is signalled at once; across processes a poller
 * reads the table (PostgreSQL processes share it; PGlite has only one process).
 * @public
 */
export class ChangeFeed extends EventEmitter<{ change: [tenant: string, topic: ChangeTopic, version: number] }> {
  // tenant → topic → version; nested maps keep the hot lookup free of string building.
  #known = new Map<string, Map<ChangeTopic, number>>();
  #timer: NodeJS.Timeout | null = null;

  constructor(private readonly store: Store) {
    super();
  }

  /** Bump a topic inside `trx`; listeners hear it once the transaction commits. */
  async bump(trx: TenantTx, tenant: string, topic: ChangeTopic): Promise<void> {
    const result = await trx.raw(
      `INSERT INTO change_versions (tenant, topic, version) VALUES (?, ?, 1)
       ON CONFLICT (tenant, topic) DO UPDATE SET version = change_versions.version + 1 RETURNING version`,
      [tenant, topic],
    );
    const version = Number((result as { rows: { version: string | number }[] }).rows[0]!.version);
    trx.executionPromise.then(
      () => this.#observe(tenant, topic, version),
      () => undefined,
    );
  }

  /** The last version this process knows of, 0 when none. */
  version(tenant: string, topic: ChangeTopic): number {
    return this.#known.get(tenant)?.get(topic) ?? 0;
  }

  #observe(tenant: string, topic: ChangeTopic, version: number): void {
    let topics = this.#known.get(tenant);
    if (!topics) this.#known.set(tenant, (topics = new Map()));
    if ((topics.get(topic) ?? 0) >= version) return;
    topics.set(topic, version);
    this.emit('change', tenant, topic, version);
  }

  /** Read every counter now (at start, and on each poll). */
  async refresh(): Promise<void> {
    const rows = await this.store.knex('change_versions').select('tenant', 'topic', 'version');
    for (const row of rows as { tenant: string; topic: ChangeTopic; version: string | number }[]) {
      this.#observe(row.tenant, row.topic, Number(row.version));
    }
  }

  /** Poll for other processes' changes every `ms`. */
  start(ms = 1000): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => {
      this.refresh().catch(() => undefined);
    }, ms);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }
}

/**
 * A per-tenant value loaded from the database and kept until its topic's version moves, so a
 * hot read costs a map lookup. Concurrent misses share one load.
 * @public
 */
export class TopicCache<T> {
  readonly #entries = new Map<string, { version: number; value: T }>();
  readonly #loading = new Map<string, { version: number; promise: Promise<T> }>();

  constructor(
    private readonly changes: ChangeFeed,
    private readonly topic: ChangeTopic,
    private readonly load: (tenant: string) => Promise<T>,
  ) {}

  /** The cached value when it is current, without waiting; undefined when it must be loaded. */
  peek(tenant: string): T | undefined {
    const hit = this.#entries.get(tenant);
    return hit && hit.version === this.changes.version(tenant, this.topic) ? hit.value : undefined;
  }

  async get(tenant: string): Promise<T> {
    const version = this.changes.version(tenant, this.topic);
    const hit = this.#entries.get(tenant);
    if (hit && hit.version === version) return hit.value;
    // A load begun before the latest change may have read old rows: only join one of this version.
    const pending = this.#loading.get(tenant);
    if (pending && pending.version === version) return pending.promise;
    const promise = this.load(tenant).then((value) => {
      if ((this.#entries.get(tenant)?.version ?? -1) <= version) this.#entries.set(tenant, { version, value });
      return value;
    });
    const entry = { version, promise };
    this.#loading.set(tenant, entry);
    promise.then(
      () => this.#loading.get(tenant) === entry && this.#loading.delete(tenant),
      () => this.#loading.get(tenant) === entry && this.#loading.delete(tenant),
    );
    return promise;
  }

  /** Forget everything (tests, shutdown). */
  clear(): void {
    this.#entries.clear();
  }
}
