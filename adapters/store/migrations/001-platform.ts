import type { Knex } from 'knex';
import { enableTenantSecurity } from './security.js';

/** Tables of the platform: tenant state, services, keys, sessions, config, activity, idempotency, change versions, milestones. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('tenant_state', (t) => {
    t.text('tenant').primary();
    t.text('mode').notNullable().defaultTo('LEARN');
    t.text('mode_before_transition');
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.schema.createTable('services', (t) => {
    t.text('id').primary();
    t.text('tenant').notNullable();
    t.text('name').notNullable();
    t.text('upstream_url').notNullable();
    t.text('routing_type').notNullable();
    t.text('routing_value').notNullable();
    t.text('mode_override');
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable();
    t.index(['tenant', 'created_at']);
  });
  // A binding may be used once per tenant; hostnames compare case-insensitively.
  await knex.raw('CREATE UNIQUE INDEX services_binding_uq ON services (tenant, routing_type, lower(routing_value))');
  await knex.schema.createTable('api_keys', (t) => {
    t.text('id').primary();
    t.text('tenant').notNullable();
    t.text('prefix').notNullable();
    t.text('key_hash').notNullable().unique();
    t.text('name');
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('last_used_at', { useTz: true });
    t.timestamp('revoked_at', { useTz: true });
    t.index(['tenant', 'created_at']);
  });
  await knex.schema.createTable('sessions', (t) => {
    t.text('token_hash').primary();
    t.text('tenant').notNullable();
    t.text('api_key_id').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.index(['tenant', 'expires_at']);
  });
  await knex.schema.createTable('config_overrides', (t) => {
    t.text('tenant').notNullable();
    t.text('key').notNullable();
    t.jsonb('value').notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable();
    t.primary(['tenant', 'key']);
  });
  await knex.schema.createTable('activity', (t) => {
    t.text('id').primary();
    t.text('tenant').notNullable();
    t.timestamp('at', { useTz: true }).notNullable();
    t.text('actor');
    t.text('action').notNullable();
    t.text('method').notNullable();
    t.text('path').notNullable();
    t.integer('status').notNullable();
    t.text('request_id').notNullable();
    t.jsonb('detail').notNullable().defaultTo('{}');
    t.index(['tenant', 'at']);
  });
  await knex.schema.createTable('idempotency_keys', (t) => {
    t.text('tenant').notNullable();
    t.text('key').notNullable();
    t.text('method').notNullable();
    t.text('path').notNullable();
    t.text('request_hash').notNullable();
    t.integer('status');
    t.jsonb('response_body');
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.primary(['tenant', 'key']);
    t.index(['tenant', 'expires_at']);
  });
  await knex.schema.createTable('change_versions', (t) => {
    t.text('tenant').notNullable();
    t.text('topic').notNullable();
    t.bigInteger('version').notNullable().defaultTo(0);
    t.primary(['tenant', 'topic']);
  });
  await knex.schema.createTable('milestones', (t) => {
    t.text('tenant').notNullable();
    t.text('milestone').notNullable();
    t.timestamp('reached_at', { useTz: true }).notNullable();
    t.primary(['tenant', 'milestone']);
  });
  for (const table of ['tenant_state', 'services', 'api_keys', 'sessions', 'config_overrides', 'activity', 'idempotency_keys', 'change_versions', 'milestones']) {
    await enableTenantSecurity(knex, table);
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['milestones', 'change_versions', 'idempotency_keys', 'activity', 'config_overrides', 'sessions', 'api_keys', 'services', 'tenant_state']) {
    await knex.schema.dropTableIfExists(table);
  }
}
