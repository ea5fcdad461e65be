import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Store } from '../../../adapters/store/connection.js';
import { testStoreOptions } from '../../helpers/harness.js';

const backend = process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite';

describe(`row-level security on ${backend}`, () => {
  const opts = testStoreOptions();
  let store: Store;
  before(async () => {
    store = Store.open(opts);
    await store.migrate();
    for (const tenant of ['acme', 'globex']) {
      await store.withTenant(tenant, (trx) =>
        trx('services').insert(
          [1, 2].map((n) => ({ id: `svc_${tenant}${n}`, tenant, name: `${tenant} ${n}`, upstream_url: 'http://x.test', routing_type: 'hostname', routing_value: `${tenant}${n}.test`, created_at: new Date(), updated_at: new Date() })),
        ),
      );
    }
  });
  after(async () => {
    await store.close();
    await opts.cleanup();
  });

  it('a query that forgets its tenant filter sees only its own tenant', async () => {
    const rows = await store.withTenant('acme', (trx) => trx('services').select('id', 'tenant').orderBy('id'));
    assert.deepEqual(rows.map((r: { tenant: string }) => r.tenant), ['acme', 'acme']);
    const count = await store.withTenant('globex', (trx) => trx('services').count({ n: '*' }));
    assert.equal(Number(count[0]!.n), 2);
  });

  it('cannot update or delete another tenant’s rows, even by id', async () => {
    await store.withTenant('acme', (trx) => trx('services').where({ id: 'svc_globex1' }).update({ name: 'hijacked' }));
    await store.withTenant('acme', (trx) => trx('services').where({ id: 'svc_globex2' }).delete());
    const rows = await store.withTenant('globex', (trx) => trx('services').select('id', 'name').orderBy('id'));
    assert.deepEqual(rows, [
      { id: 'svc_globex1', name: 'globex 1' },
      { id: 'svc_globex2', name: 'globex 2' },
    ]);
  });

  it('refuses to write a row for another tenant', async () => {
    await assert.rejects(
      store.withTenant('acme', (trx) => trx('services').insert({ id: 'svc_x', tenant: 'globex', name: 'x', upstream_url: 'http://x.test', routing_type: 'hostname', routing_value: 'x.test', created_at: new Date(), updated_at: new Date() })),
      /row-level security/,
    );
  });

  it('sees nothing with no tenant set', async () => {
    const rows = await store.knex.transaction(async (trx) => {
      await trx.raw("SELECT set_config('role', 'understudy_app', true)");
      return trx('services').select('id');
    });
    assert.deepEqual(rows, []);
  });

  it('covers every tenant-scoped table', async () => {
    const result = await store.knex.raw(
      `SELECT c.relname AS name, c.relrowsecurity AS rls FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'tenant' AND NOT a.attisdropped
       WHERE n.nspname = ? AND c.relkind = 'r'`,
      [store.schema],
    );
    const tables = (result as { rows: { name: string; rls: boolean }[] }).rows;
    assert.ok(tables.length >= 9);
    assert.deepEqual(tables.filter((t) => !t.rls).map((t) => t.name), []);
  });
});
