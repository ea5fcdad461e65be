/** One finding a scrubber made: where, and which rule. Never the value. */
export interface ScrubFinding {
  path: string;
  rule: string;
}

/** Context a scrubber gets: the tenant's pseudonymisation key and the service's rules. */
export interface ScrubContext {
  /** Secret per tenant, for keyed, deterministic pseudonyms. */
  tenantKey: Uint8Array;
  rules: Record<string, unknown>;
}

/** Kind `scrubber`: takes a JSON-shaped record and returns it with PII or credentials replaced. Pure. */
export interface Scrubber {
  scrub<T>(record: T, ctx: ScrubContext): { record: T; findings: ScrubFinding[] };
}
