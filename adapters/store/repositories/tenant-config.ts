import type { Store } from '../connection.js';
import type { ChangeFeed } from './change-versions.js';
import { json } from './rows.js';

/** A tenant's config overrides (validated by the caller against kernel/config TENANT_SETTINGS). @public */
export class TenantConfigRepo {
  constructor(
    private readonly store: Store,
    private readonly changes: ChangeFeed,
  ) {}

  async overrides(tenant: string): Promise<Record<string, unknown>> {
    const rows = await this.store.withTenant(tenant, (trx) => trx('config_overrides').select('key', 'value'));
    return Object.fromEntries(rows.map((r: { key: string; value: unknown }) => [r.key, json(r.value)]));
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
