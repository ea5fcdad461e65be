import type { Knex } from 'knex';

/**
 * The library's natural key and provenance: `match_key` identifies an entry by what it answers
 * (service, method, path, query, body matcher, status), so importing the same document twice, or
 * retrying a transition, updates entries instead of duplicating them; `origin` says where in
 * which source an entry came from (`log.entries[17]`, `paths./pets.get.responses.200`, …).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('mocks', (t) => {
    t.text('origin');
    t.text('match_key');
  });
  // Entries made before the key existed keep a key of their own (their id): nothing merges.
  await knex.raw('UPDATE mocks SET match_key = id WHERE match_key IS NULL');
  await knex.raw('ALTER TABLE mocks ALTER COLUMN match_key SET NOT NULL');
  await knex.raw('CREATE UNIQUE INDEX mocks_match_key_uq ON mocks (tenant, match_key)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS mocks_match_key_uq');
  await knex.schema.alterTable('mocks', (t) => {
    t.dropColumn('match_key');
    t.dropColumn('origin');
  });
}
