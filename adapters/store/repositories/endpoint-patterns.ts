import type { EndpointPatterns } from '../../../kernel/contracts/index.js';
import type { Store, TenantTx } from '../connection.js';
import { iso, json } from './rows.js';

/** What the traffic says about one endpoint of a service, as stored. */
export interface StoredPatterns extends EndpointPatterns {
  service_id: string;
  updated_at: string;
}

/**
 * Patterns per endpoint (query parameters, request and response JSON Schemas), as the latest
 * extraction over a service's traffic found them; drift detection compares against these.
 * @public
 */
export class EndpointPatternsRepo {
  constructor(private readonly store: Store) {}

  /** Replaces the service's patterns with these, in `trx` when given. */
  async replace(tenant: string, serviceId: string, endpoints: readonly EndpointPatterns[], trx?: TenantTx): Promise<void> {
    if (!trx) return this.store.withTenant(tenant, (t) => this.replace(tenant, serviceId, endpoints, t));
    await trx('endpoint_patterns').where({ service_id: serviceId }).delete();
    const now = new Date();
    const rows = endpoints.map((e) => ({
      tenant,
      service_id: serviceId,
      method: e.method,
      uri_template: e.uri_template,
      samples: e.samples,
      query: JSON.stringify(e.query),
      request_schema: e.request_schema === null ? null : JSON.stringify(e.request_schema),
      response_schemas: JSON.stringify(e.response_schemas),
      updated_at: now,
    }));
    for (let i = 0; i < rows.length; i += 500) await trx('endpoint_patterns').insert(rows.slice(i, i + 500));
  }

  async ofService(tenant: string, serviceId: string): Promise<StoredPatterns[]> {
    const rows = await this.store.withTenant(tenant, (trx) => trx('endpoint_patterns').where({ service_id: serviceId }).orderBy([{ column: 'uri_template' }, { column: 'method' }]));
    return rows.map((r: Record<string, unknown>) => ({
      service_id: String(r.service_id),
      method: String(r.method),
      uri_template: String(r.uri_template),
      samples: Number(r.samples),
      query: json(r.query),
      request_schema: json(r.request_schema) ?? null,
      response_schemas: json(r.response_schemas),
      updated_at: iso(r.updated_at),
    }));
  }
}
