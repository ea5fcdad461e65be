import type { Logger } from 'pino';
import { checkedTenantConfig } from '../../../kernel/config.js';
import type { Store } from '../connection.js';
import type { ChangeFeed } from './change-versions.js';
import { json } from './rows.js';

/** A tenant's config overrides (validated by the caller against kernel/config TENANT_SETTINGS). @public */
export class TenantConfigRepo {
  constructor(
    private readonly store: Store,
    private readonly changes: ChangeFeed,
    private readonly logger?: Pick<Logger, 'warn'>,
  ) {}

  /**
   * The overrides as stored. One that is no longer valid is logged (where, never the value);
   * `mergeTenantConfig` leaves it out of the config in force.
   */
  async overrides(tenant: string): Promise<Record<string, unknown>> {
    const rows = await this.store.withTenant(tenant, (trx) => trx('config_overrides').select('key', 'value'));
    const overrides = Object.fromEntries(rows.map((r: { key: string; value: unknown }) => [r.key, json(r.value)]));
    const { problems } = checkedTenantConfig(overrides);
    if (problems.length) this.logger?.warn({ tenant, problems }, 'stored config is no longer valid; its invalid parts are ignored (GET /v1/scrub/config and GET /config show the config in force)');
    return overrides;
  }

  async set(tenant: string, key: string, value: unknown): Promise<void> {
    await this.store.withTenant(tenant, async (trx) => {
      await trx('config_overrides')
        .insert({ tenant, key, value: JSON.stringify(value), updated_at: new Date() })
        .onConflict(['tenant', 'key'])
        .merge(['value', 'updated_at']);
      await this.changes.bump(trx, tenant, 'config');
    });
  }
}
