import type { Knex } from 'knex';

/** The non-owner role application queries run as; row-level security applies to it. */
export const APP_ROLE = 'understudy_app';

/** Creates the application role once per cluster and lets the migrating user switch to it. */
export async function ensureAppRole(knex: Knex): Promise<void> {
  await knex.raw(`DO $$ BEGIN CREATE ROLE ${APP_ROLE} NOLOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$`);
  // Superusers may SET ROLE to anything; a non-superuser owner needs membership.
  await knex.raw(`DO $$ BEGIN EXECUTE format('GRANT ${APP_ROLE} TO %I', current_user); EXCEPTION WHEN OTHERS THEN NULL; END $$`);
  await knex.raw(`DO $$ BEGIN EXECUTE format('GRANT USAGE ON SCHEMA %I TO ${APP_ROLE}', current_schema()); END $$`);
}

/**
 * Turns on row-level security for a tenant-scoped table: the app role sees and writes only the
 * rows whose `tenant` equals `app.tenant`, set per transaction by the store.
 */
export async function enableTenantSecurity(knex: Knex, table: string): Promise<void> {
  await knex.raw(`GRANT SELECT, INSERT, UPDATE, DELETE ON ?? TO ${APP_ROLE}`, [table]);
  await knex.raw('ALTER TABLE ?? ENABLE ROW LEVEL SECURITY', [table]);
  await knex.raw(
    `CREATE POLICY tenant_isolation ON ?? FOR ALL TO ${APP_ROLE}
       USING (tenant = current_setting('app.tenant', true))
       WITH CHECK (tenant = current_setting('app.tenant', true))`,
    [table],
  );
}
