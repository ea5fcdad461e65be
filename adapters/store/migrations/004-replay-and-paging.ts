import type { Knex } from 'knex';

/**
 * Idempotency records keep the headers of the answer they replay (a repeated transition start
 * gets its `Location` back too); the library gets an index that pages it in creation order, so
 * each page of an export is a range scan instead of a sort of the whole library.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('idempotency_keys', (t) => {
    t.jsonb('response_headers');
  });
  await knex.raw('CREATE INDEX mocks_tenant_created_id_idx ON mocks (tenant, created_at, id)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS mocks_tenant_created_id_idx');
  await knex.schema.alterTable('idempotency_keys', (t) => {
    t.dropColumn('response_headers');
  });
}
