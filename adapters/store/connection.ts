import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import knexFactory, { type Knex } from 'knex';
import ClientPgLite from 'knex-pglite';
import { migrationSource } from './migrations/index.js';
import { APP_ROLE, ensureAppRole } from './migrations/security.js';

/** How to reach the database. @public */
export interface StoreOptions {
  /** postgres://… selects PostgreSQL; unset selects embedded PGlite. */
  databaseUrl?: string | undefined;
  /** PGlite files go in `<dataDir>/db`; ignored for PostgreSQL. */
  dataDir?: string | undefined;
  /** PGlite in memory (tests). */
  memory?: boolean;
  /** PostgreSQL schema to work in (tests isolate themselves this way); default `public`. */
  schema?: string | undefined;
  /** Pool size for PostgreSQL; default 10. */
  poolMax?: number;
}

/**
 * Runs initdb for a new PGlite directory in a child process: done in this process, it would
 * leave ~450 MB of resident memory behind for the life of the server.
 */
function initialisePglite(dir: string): void {
  const script = new URL('./pglite-init.js', import.meta.url).pathname;
  const res = spawnSync(process.execPath, [script, dir], { encoding: 'utf8', timeout: 120_000 });
  if (res.status !== 0) throw new Error(`could not create the embedded database in ${dir}: ${(res.stderr || res.error?.message || 'initdb failed').trim().slice(0, 500)}`);
}

/**
 * PGlite's defaults size shared_buffers for a server (128 MB), and the WASM build touches all of
 * it at start, so it stays resident for the process's life. The embedded database serves one
 * process whose files the OS already caches: 16 MB keeps start-up at about 180 MiB instead of
 * 300 (figures in docs/benchmarks.md, "Notes on the library figures").
 */
const PGLITE_CONF = ['shared_buffers=16MB'];

/** A transaction whose queries run as the app role with `app.tenant` set. @public */
export type TenantTx = Knex.Transaction;

/**
 * The database: PostgreSQL through pg, or PGlite in-process. Application queries go through
 * {@link Store.withTenant}, so row-level security scopes them even when a `where tenant = ?`
 * is forgotten.
 * @public
 */
export class Store {
  private constructor(
    readonly knex: Knex,
    readonly dialect: 'postgres' | 'pglite',
    readonly schema: string,
  ) {}

  static open(opts: StoreOptions = {}): Store {
    const schema = opts.schema ?? 'public';
    if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new Error(`schema '${schema}' must be a plain lower-case identifier`);
    if (opts.databaseUrl) {
      const knex = knexFactory({
        client: 'pg',
        connection: { connectionString: opts.databaseUrl, connectionTimeoutMillis: 3000 },
        searchPath: [schema],
        pool: { min: 0, max: opts.poolMax ?? 10 },
        acquireConnectionTimeout: 5000,
      });
      return new Store(knex, 'postgres', schema);
    }
    let dir: string | undefined;
    if (!opts.memory) {
      dir = path.join(opts.dataDir ?? './data', 'db');
      mkdirSync(dir, { recursive: true });
      if (!existsSync(path.join(dir, 'PG_VERSION'))) initialisePglite(dir);
    }
    const pglite = new PGlite({ ...(dir && { dataDir: dir }), postgresqlconf: PGLITE_CONF });
    // knex-pglite takes a ready instance from a function (knex would deep-copy a plain object).
    const connection = (() => ({ pglite })) as unknown as Knex.StaticConnectionConfig;
    const knex = knexFactory({ client: ClientPgLite as unknown as typeof knexFactory.Client, dialect: 'postgres', connection });
    return new Store(knex, 'pglite', 'public');
  }

  /** Brings the schema up to date. Safe to run at every start and from several processes. */
  async migrate(): Promise<void> {
    if (this.schema !== 'public') await this.knex.raw('CREATE SCHEMA IF NOT EXISTS ??', [this.schema]);
    // One migrator at a time across processes; knex's own lock table covers the rest.
    await this.knex.transaction(async (trx) => {
      await trx.raw('SELECT pg_advisory_xact_lock(hashtext(?))', [`understudy-migrate:${this.schema}`]);
      await ensureAppRole(trx);
    });
    await this.knex.migrate.latest({ migrationSource, schemaName: this.schema === 'public' ? undefined : this.schema });
  }

  /** Runs `fn` in a transaction as the app role with `app.tenant` = `tenant`. */
  async withTenant<T>(tenant: string, fn: (trx: TenantTx) => Promise<T>): Promise<T> {
    return this.knex.transaction(async (trx) => {
      await trx.raw(`SELECT set_config('role', '${APP_ROLE}', true), set_config('app.tenant', ?, true)`, [tenant]);
      return fn(trx);
    });
  }

  /** Resolves when the database answers a trivial query within `timeoutMs`. */
  async ping(timeoutMs = 2000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`database did not answer within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      await Promise.race([this.knex.raw('SELECT 1'), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    await this.knex.destroy();
  }
}
