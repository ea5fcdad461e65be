import type { Knex } from 'knex';
import { enableTenantSecurity } from './security.js';

const TABLES = ['transition_jobs', 'endpoint_patterns', 'tenant_secrets'];

/**
 * The transition: its jobs (claimed with SKIP LOCKED under a lease), the patterns extracted per
 * endpoint (query parameters, JSON Schemas, for drift detection later), and each tenant's
 * pseudonym key (a secret: never logged, exported or returned).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('transition_jobs', (t) => {
    t.text('id').primary();
    t.text('tenant').notNullable();
    t.text('service_id').notNullable();
    t.text('status').notNullable();
    t.double('progress').notNullable().defaultTo(0);
    t.text('current_stage');
    t.integer('records_processed').notNullable().defaultTo(0);
    t.integer('records_total').notNullable().defaultTo(0);
    t.text('error');
    t.jsonb('result');
    t.integer('attempts').notNullable().defaultTo(0);
    t.boolean('cancel_requested').notNullable().defaultTo(false);
    t.text('lease_owner');
    t.timestamp('lease_expires_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('started_at', { useTz: true });
    t.timestamp('finished_at', { useTz: true });
    t.timestamp('updated_at', { useTz: true }).notNullable();
    t.index(['tenant', 'created_at']);
  });
  // One transition at a time per tenant, whatever races the API has.
  await knex.raw("CREATE UNIQUE INDEX transition_jobs_active_uq ON transition_jobs (tenant) WHERE status IN ('queued', 'running')");
  await knex.schema.createTable('endpoint_patterns', (t) => {
    t.text('tenant').notNullable();
    t.text('service_id').notNullable();
    t.text('method').notNullable();
    t.text('uri_template').notNullable();
    t.integer('samples').notNullable();
    t.jsonb('query').notNullable();
    t.jsonb('request_schema');
    t.jsonb('response_schemas').notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable();
    t.primary(['tenant', 'service_id', 'method', 'uri_template']);
  });
  await knex.schema.createTable('tenant_secrets', (t) => {
    t.text('tenant').primary();
    t.text('pseudonym_key').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
  });
  for (const table of TABLES) await enableTenantSecurity(knex, table);
}

export async function down(knex: Knex): Promise<void> {
  for (const table of [...TABLES].reverse()) await knex.schema.dropTableIfExists(table);
}
