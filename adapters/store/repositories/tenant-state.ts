import type { Mode } from '../../../kernel/domain/index.js';
import { AppError } from '../../../kernel/errors.js';
import type { Store } from '../connection.js';
import type { ChangeFeed } from './change-versions.js';
import { iso } from './rows.js';

/** The tenant's global mode. A tenant with no row is in LEARN. @public */
export class TenantStateRepo {
  constructor(
    private readonly store: Store,
    private readonly changes: ChangeFeed,
  ) {}

  async mode(tenant: string): Promise<{ mode: Mode; updated_at: string | null }> {
    const row = await this.store.withTenant(tenant, (trx) => trx('tenant_state').where({ tenant }).first('mode', 'updated_at'));
    return row ? { mode: row.mode as Mode, updated_at: iso(row.updated_at) } : { mode: 'LEARN', updated_at: null };
  }

  /**
   * Sets the mode. An operator's change (`byOperator`) is refused with 503 `transitioning` while
   * a transition runs; only the transition job itself moves the mode out of TRANSITIONING.
   */
  async setMode(tenant: string, mode: Mode, opts: { byOperator?: boolean } = {}): Promise<{ mode: Mode; previous: Mode; updated_at: string }> {
    const now = new Date();
    const previous = await this.store.withTenant(tenant, async (trx) => {
      const current = await trx('tenant_state').where({ tenant }).forUpdate().first('mode');
      if (opts.byOperator && current?.mode === 'TRANSITIONING') {
        throw new AppError('transitioning', 'a transition is running; the mode changes when it ends', { headers: { 'Retry-After': '5' } });
      }
      await trx('tenant_state').insert({ tenant, mode, updated_at: now }).onConflict('tenant').merge(['mode', 'updated_at']);
      await this.changes.bump(trx, tenant, 'mode');
      return (current?.mode as Mode | undefined) ?? 'LEARN';
    });
    return { mode, previous, updated_at: now.toISOString() };
  }
}
