import type { Store } from '../connection.js';
import { iso } from './rows.js';

/** The five onboarding steps, in order. */
export const ONBOARDING_STEPS = [
  { id: 'key_created', title: 'Create an API key' },
  { id: 'service_registered', title: 'Register an upstream service' },
  { id: 'traffic_recorded', title: 'Record traffic through the agent in LEARN mode' },
  { id: 'transition_run', title: 'Run a LEARN to MOCK transition' },
  { id: 'mock_served', title: 'Serve a request from the mock library' },
] as const;

export type Milestone = (typeof ONBOARDING_STEPS)[number]['id'];

/** First-time milestones of a tenant; reaching one again changes nothing. @public */
export class MilestonesRepo {
  constructor(private readonly store: Store) {}

  async reach(tenant: string, milestone: Milestone): Promise<void> {
    await this.store.withTenant(tenant, (trx) => trx('milestones').insert({ tenant, milestone, reached_at: new Date() }).onConflict(['tenant', 'milestone']).ignore());
  }

  async reached(tenant: string): Promise<Map<Milestone, string>> {
    const rows = await this.store.withTenant(tenant, (trx) => trx('milestones').select('milestone', 'reached_at'));
    return new Map(rows.map((r: { milestone: Milestone; reached_at: unknown }) => [r.milestone, iso(r.reached_at)]));
  }
}
