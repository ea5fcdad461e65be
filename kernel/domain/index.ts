/** The shared vocabulary of the service. Plain data only. @public */

/** Global and per-service operating modes. */
export const MODES = ['LEARN', 'MOCK', 'PASSTHROUGH', 'TRANSITIONING'] as const;
export type Mode = (typeof MODES)[number];

/** Plans, ordered: a higher tier includes every feature of a lower one. */
export const TIERS = ['free', 'pro', 'enterprise'] as const;
export type Tier = (typeof TIERS)[number];

/** True when `have` includes what `need` does. */
export function tierAtLeast(have: Tier, need: Tier): boolean {
  return TIERS.indexOf(have) >= TIERS.indexOf(need);
}

export const ROUTING_TYPES = ['hostname', 'path_prefix'] as const;
export type RoutingType = (typeof ROUTING_TYPES)[number];

/** A registered upstream. */
export interface Service {
  id: string;
  name: string;
  upstream_url: string;
  routing_type: RoutingType;
  routing_value: string;
  /** Wins over the global mode for this service when set. */
  mode_override: Exclude<Mode, 'TRANSITIONING'> | null;
  created_at: string;
  updated_at: string;
}

/** What the licence says about this deployment. */
export interface Licence {
  tenant: string;
  tier: Tier;
  /** Expiry, seconds since the epoch; absent = never. */
  exp?: number;
}

/** An API key as the API shows it: never the raw key. */
export interface ApiKeyInfo {
  id: string;
  prefix: string;
  name: string | null;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

/** One line of the activity log. */
export interface ActivityRecord {
  id: string;
  at: string;
  actor: string | null;
  action: string;
  method: string;
  path: string;
  status: number;
  request_id: string;
  detail: Record<string, unknown>;
}
