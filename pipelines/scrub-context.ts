import { mergeTenantConfig } from '../kernel/config.js';
import type { ScrubContext } from '../kernel/contracts/index.js';
import { effectiveScrubRules, type ScrubRulesConfig } from '../kernel/scrub/rules.js';
import type { TenantConfigRepo } from '../adapters/store/repositories/tenant-config.js';
import type { TenantSecretsRepo } from '../adapters/store/repositories/tenant-secrets.js';

/** What reading a scrub context needs. */
export interface ScrubContextDeps {
  tenantConfig: TenantConfigRepo;
  tenantSecrets: TenantSecretsRepo;
}

/**
 * The scrub context of a service: the tenant's pseudonym key and the rules in force for the
 * service (`*`'s alone when `serviceId` is null). Transitions, seed imports and the dry run
 * read it the same way, so one value scrubs to one pseudonym whichever path it took.
 * @public
 */
export async function loadScrubContext(deps: ScrubContextDeps, tenant: string, serviceId: string | null): Promise<ScrubContext> {
  return (await loadScrubContexts(deps, tenant, [serviceId])).get(serviceId)!;
}

/** The scrub contexts of several services at once (one read of the key and the config). @public */
export async function loadScrubContexts(deps: ScrubContextDeps, tenant: string, serviceIds: readonly (string | null)[]): Promise<Map<string | null, ScrubContext>> {
  const config = mergeTenantConfig(await deps.tenantConfig.overrides(tenant));
  const tenantKey = await deps.tenantSecrets.pseudonymKey(tenant);
  return new Map(serviceIds.map((id) => [id, { tenantKey, rules: effectiveScrubRules(config.scrub_rules as ScrubRulesConfig, id) }]));
}
