import { newPseudonymKey } from '../../../kernel/scrub/pseudonym.js';
import type { Store } from '../connection.js';

/**
 * Each tenant's pseudonym key, made on first use and never changed (pseudonyms must stay the
 * same across transitions). It leaves this repository only into a scrub context; never log,
 * return or export it.
 * @public
 */
export class TenantSecretsRepo {
  readonly #keys = new Map<string, string>();

  constructor(private readonly store: Store) {}

  async pseudonymKey(tenant: string): Promise<string> {
    const known = this.#keys.get(tenant);
    if (known) return known;
    const key = await this.store.withTenant(tenant, async (trx) => {
      await trx('tenant_secrets').insert({ tenant, pseudonym_key: newPseudonymKey(), created_at: new Date() }).onConflict('tenant').ignore();
      const row = (await trx('tenant_secrets').where({ tenant }).first('pseudonym_key')) as { pseudonym_key: string };
      return row.pseudonym_key;
    });
    this.#keys.set(tenant, key);
    return key;
  }
}
