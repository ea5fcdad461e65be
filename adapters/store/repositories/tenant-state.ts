import type { Mode } from '../../../kernel/domain/index.js';
import { AppError } from '../../../kernel/errors.js';
import type { Store, TenantTx } from '../connection.js';
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

  /**
   * In `trx`: LEARN → TRANSITIONING, remembering LEARN as the mode to return to. A running
   * transition is 503 `transitioning`; any other mode is 409 `invalid_state`.
   */
  async enterTransition(trx: TenantTx, tenant: string): Promise<void> {
    const current = ((await trx('tenant_state').where({ tenant }).forUpdate().first('mode'))?.mode as Mode | undefined) ?? 'LEARN';
    if (current === 'TRANSITIONING') throw new AppError('transitioning', 'a transition is already running; watch it with GET /v1/transition/jobs', { headers: { 'Retry-After': '5' } });
    if (current !== 'LEARN') throw new AppError('invalid_state', `a transition starts from LEARN, and the mode is ${current}; POST /v1/mode {"mode":"learn"} first`);
    await trx('tenant_state').insert({ tenant, mode: 'TRANSITIONING', mode_before_transition: current, updated_at: new Date() }).onConflict('tenant').merge(['mode', 'mode_before_transition', 'updated_at']);
    await this.changes.bump(trx, tenant, 'mode');
  }

  /** In `trx`: out of TRANSITIONING, to MOCK when the transition succeeded, else back to the mode before it. */
  async leaveTransition(trx: TenantTx, tenant: string, succeeded: boolean): Promise<void> {
    const row = await trx('tenant_state').where({ tenant }).forUpdate().first('mode', 'mode_before_transition');
    if (row?.mode !== 'TRANSITIONING') return;
    const mode = succeeded ? 'MOCK' : ((row.mode_before_transition as Mode | null) ?? 'LEARN');
    await trx('tenant_state').where({ tenant }).update({ mode, mode_before_transition: null, updated_at: new Date() });
    await this.changes.bump(trx, tenant, 'mode');
  }
}
