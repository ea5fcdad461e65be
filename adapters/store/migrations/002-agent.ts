import type { Knex } from 'knex';
import { enableTenantSecurity } from './security.js';

const TABLES = ['mocks', 'traffic', 'webhooks', 'unmatched_requests'];

/** The agent's tables: the mock library, imported traffic and webhooks, unmatched requests. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('mocks', (t) => {
    t.text('id').primary();
    t.text('tenant').notNullable();
    t.text('service_id').notNullable();
    t.text('service_upstream_id').notNullable();
    t.text('method').notNullable();
    t.text('path').notNullable();
    t.text('uri_template').notNullable();
    t.jsonb('query');
    t.jsonb('body_matcher');
    t.integer('response_status').notNullable();
    t.jsonb('response_headers').notNullable().defaultTo('{}');
    t.jsonb('response_body');
    t.text('source').notNullable();
    t.boolean('scrubbed').notNullable().defaultTo(false);
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('last_hit_at', { useTz: true });
    t.bigInteger('hit_count').notNullable().defaultTo(0);
    t.index(['tenant', 'service_id', 'method']);
  });
  await knex.schema.createTable('traffic', (t) => {
    t.text('id').primary();
    t.text('tenant').notNullable();
    t.text('service_id').notNullable();
    t.timestamp('recorded_at', { useTz: true }).notNullable();
    t.text('method').notNullable();
    t.text('path').notNullable();
    t.integer('status');
    t.jsonb('record').notNullable();
    t.index(['tenant', 'recorded_at']);
    t.index(['tenant', 'service_id', 'recorded_at']);
  });
  await knex.schema.createTable('webhooks', (t) => {
    t.text('id').primary();
    t.text('tenant').notNullable();
    t.text('service_id').notNullable();
    t.timestamp('received_at', { useTz: true }).notNullable();
    t.text('signature_kind').notNullable();
    t.jsonb('record').notNullable();
    t.index(['tenant', 'service_id', 'received_at']);
  });
  await knex.schema.createTable('unmatched_requests', (t) => {
    t.text('tenant').notNullable();
    t.text('service_id').notNullable();
    t.text('method').notNullable();
    t.text('path').notNullable();
    t.text('query').notNullable().defaultTo('');
    t.bigInteger('count').notNullable().defaultTo(0);
    t.timestamp('first_seen_at', { useTz: true }).notNullable();
    t.timestamp('last_seen_at', { useTz: true }).notNullable();
    t.jsonb('hint');
    t.primary(['tenant', 'service_id', 'method', 'path', 'query']);
  });
  for (const table of TABLES) await enableTenantSecurity(knex, table);
}

export async function down(knex: Knex): Promise<void> {
  for (const table of [...TABLES].reverse()) await knex.schema.dropTableIfExists(table);
}
