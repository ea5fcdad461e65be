import { AppError } from '../../../kernel/errors.js';
import { newId } from '../../../kernel/ids.js';
import type { Mode, RoutingType, Service } from '../../../kernel/domain/index.js';
import type { Store } from '../connection.js';
import type { ChangeFeed } from './change-versions.js';
import { iso, isUniqueViolation } from './rows.js';

export interface ServiceInput {
  name: string;
  upstream_url: string;
  routing_type: RoutingType;
  routing_value: string;
  mode_override?: Service['mode_override'];
}

function toService(row: Record<string, unknown>): Service {
  return {
    id: String(row.id),
    name: String(row.name),
    upstream_url: String(row.upstream_url),
    routing_type: row.routing_type as RoutingType,
    routing_value: String(row.routing_value),
    mode_override: (row.mode_override as Exclude<Mode, 'TRANSITIONING'> | null) ?? null,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

const COLUMNS = ['id', 'name', 'upstream_url', 'routing_type', 'routing_value', 'mode_override', 'created_at', 'updated_at'];

function bindingTaken(input: { routing_type: string; routing_value: string }): AppError {
  return new AppError('conflict', `${input.routing_type} binding '${input.routing_value}' is already used by another service`);
}

/** Registered upstream services of one tenant. @public */
export class ServicesRepo {
  constructor(
    private readonly store: Store,
    private readonly changes: ChangeFeed,
  ) {}

  async all(tenant: string): Promise<Service[]> {
    const rows = await this.store.withTenant(tenant, (trx) => trx('services').select(COLUMNS).orderBy([{ column: 'created_at' }, { column: 'id' }]));
    return rows.map(toService);
  }

  async get(tenant: string, id: string): Promise<Service> {
    const row = await this.store.withTenant(tenant, (trx) => trx('services').select(COLUMNS).where({ id }).first());
    if (!row) throw new AppError('not_found', `service '${id}' not found`);
    return toService(row);
  }

  async create(tenant: string, input: ServiceInput): Promise<Service> {
    const now = new Date();
    const row = { id: newId('svc'), tenant, ...input, mode_override: input.mode_override ?? null, created_at: now, updated_at: now };
    try {
      await this.store.withTenant(tenant, async (trx) => {
        await trx('services').insert(row);
        await this.changes.bump(trx, tenant, 'services');
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw bindingTaken(input);
      throw err;
    }
    return toService(row);
  }

  async update(tenant: string, id: string, patch: Partial<ServiceInput>): Promise<Service> {
    try {
      const row = await this.store.withTenant(tenant, async (trx) => {
        const [updated] = await trx('services').where({ id }).update({ ...patch, updated_at: new Date() }).returning(COLUMNS);
        if (updated) await this.changes.bump(trx, tenant, 'services');
        return updated;
      });
      if (!row) throw new AppError('not_found', `service '${id}' not found`);
      return toService(row);
    } catch (err) {
      if (isUniqueViolation(err)) throw bindingTaken({ routing_type: patch.routing_type ?? 'routing', routing_value: patch.routing_value ?? '' });
      throw err;
    }
  }

  async remove(tenant: string, id: string): Promise<void> {
    const n = await this.store.withTenant(tenant, async (trx) => {
      // returning() rather than the affected-row count: knex-pglite does not report that count.
      const deleted = await trx('services').where({ id }).delete().returning('id');
      if (deleted.length) await this.changes.bump(trx, tenant, 'services');
      return deleted.length;
    });
    if (!n) throw new AppError('not_found', `service '${id}' not found`);
  }
}
