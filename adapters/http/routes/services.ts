import { Type, type Static } from '@sinclair/typebox';
import type { RoutingType, Service } from '../../../kernel/domain/index.js';
import { AppError } from '../../../kernel/errors.js';
import { defineRoute, type RouteSpec } from '../route.js';
import { IdParam, ListEnvelope, listEnvelope, Pagination } from '../schema.js';

const ModeOverride = Type.Union([Type.Literal('learn'), Type.Literal('mock'), Type.Literal('passthrough'), Type.Null()], {
  description: 'Per-service mode that wins over the global mode; null follows the global mode.',
});

export const ServiceSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  upstream_url: Type.String(),
  routing_type: Type.Union([Type.Literal('hostname'), Type.Literal('path_prefix')]),
  routing_value: Type.String(),
  mode_override: Type.Union([Type.Literal('LEARN'), Type.Literal('MOCK'), Type.Literal('PASSTHROUGH'), Type.Null()]),
  created_at: Type.String(),
  updated_at: Type.String(),
});

const fields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  upstream_url: Type.String({ minLength: 1, maxLength: 2048, description: 'Absolute http:// or https:// URL the agent forwards to.' }),
  routing_type: Type.Union([Type.Literal('hostname'), Type.Literal('path_prefix')]),
  routing_value: Type.String({ minLength: 1, maxLength: 255, description: 'A hostname (port ignored), or a path prefix of whole segments such as /stripe.' }),
  mode_override: ModeOverride,
};

const CreateBody = Type.Object(
  { name: fields.name, upstream_url: fields.upstream_url, routing_type: fields.routing_type, routing_value: fields.routing_value, mode_override: Type.Optional(fields.mode_override) },
  { additionalProperties: false },
);
const UpdateBody = Type.Partial(Type.Object(fields), { additionalProperties: false, minProperties: 1 });

const HOSTNAME_RE = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;
const SEGMENT_RE = /^[A-Za-z0-9._~!$&'()*+,;=:@%-]+$/;
/** Paths the agent keeps for itself. */
const RESERVED_PREFIXES = ['/__understudy', '/webhook', '/metrics'];

function checkUpstream(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new AppError('validation_error', `body.upstream_url: '${url}' is not an absolute URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new AppError('validation_error', 'body.upstream_url: must start with http:// or https://');
  if (parsed.search || parsed.hash) throw new AppError('validation_error', 'body.upstream_url: must not carry a query or fragment');
  return parsed.href.replace(/\/$/, '');
}

/** Normalises a binding: hostnames lower-case without a port; prefixes as `/a/b` without a trailing slash. */
function checkBinding(type: RoutingType, value: string): string {
  if (type === 'hostname') {
    const host = value.trim().toLowerCase().replace(/:\d+$/, '').replace(/\.$/, '');
    if (!HOSTNAME_RE.test(host)) throw new AppError('validation_error', `body.routing_value: '${value}' is not a hostname`);
    return host;
  }
  const prefix = value.trim().replace(/\/+$/, '');
  const segments = prefix.split('/').slice(1);
  if (!prefix.startsWith('/') || !segments.length || !segments.every((s) => SEGMENT_RE.test(s) && s !== '.' && s !== '..')) {
    throw new AppError('validation_error', `body.routing_value: '${value}' is not a path prefix such as /stripe`);
  }
  const reserved = RESERVED_PREFIXES.find((r) => prefix === r || prefix.startsWith(`${r}/`));
  if (reserved) throw new AppError('validation_error', `body.routing_value: ${reserved} is reserved by the agent`);
  return prefix;
}

function modeOverride(value: Static<typeof ModeOverride> | undefined): Service['mode_override'] | undefined {
  if (value === undefined) return undefined;
  return value === null ? null : (value.toUpperCase() as Service['mode_override']);
}

/** Services CRUD. */
export const servicesRoutes: RouteSpec[] = [
  defineRoute({
    method: 'GET',
    path: '/services',
    summary: 'List the registered services',
    tag: 'services',
    query: Pagination,
    responses: { 200: { description: 'A page of services', schema: ListEnvelope(ServiceSchema) } },
    async handler({ cradle, tenant, query }) {
      const all = cradle.servicesCache.peek(tenant) ?? (await cradle.servicesCache.get(tenant));
      return { body: listEnvelope(all.slice(query.offset, query.offset + query.limit), all.length, query) };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/services/{id}',
    summary: 'One service',
    tag: 'services',
    params: IdParam,
    responses: { 200: { description: 'The service', schema: ServiceSchema } },
    handler: async ({ cradle, tenant, params }) => ({ body: await cradle.services.get(tenant, params.id) }),
  }),
  defineRoute({
    method: 'POST',
    path: '/services',
    summary: 'Register an upstream service and its binding',
    tag: 'services',
    body: CreateBody,
    responses: { 201: { description: 'Created', schema: ServiceSchema }, 409: { description: 'The binding is used by another service' } },
    async handler({ cradle, tenant, body }) {
      const service = await cradle.services.create(tenant, {
        name: body.name.trim(),
        upstream_url: checkUpstream(body.upstream_url),
        routing_type: body.routing_type,
        routing_value: checkBinding(body.routing_type, body.routing_value),
        mode_override: modeOverride(body.mode_override) ?? null,
      });
      await cradle.milestones.reach(tenant, 'service_registered');
      return { status: 201, body: service, headers: { Location: `/services/${service.id}` }, activity: { service_id: service.id } };
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/services/{id}',
    summary: 'Update a service, including its mode override',
    tag: 'services',
    params: IdParam,
    body: UpdateBody,
    responses: { 200: { description: 'Updated', schema: ServiceSchema }, 409: { description: 'The binding is used by another service' } },
    async handler({ cradle, tenant, params, body }) {
      const current = await cradle.services.get(tenant, params.id);
      const routingType = body.routing_type ?? current.routing_type;
      const patch = {
        ...(body.name !== undefined && { name: body.name.trim() }),
        ...(body.upstream_url !== undefined && { upstream_url: checkUpstream(body.upstream_url) }),
        ...((body.routing_type !== undefined || body.routing_value !== undefined) && {
          routing_type: routingType,
          routing_value: checkBinding(routingType, body.routing_value ?? current.routing_value),
        }),
        ...(body.mode_override !== undefined && { mode_override: modeOverride(body.mode_override) }),
      };
      const service = await cradle.services.update(tenant, params.id, patch);
      return { body: service, activity: { service_id: service.id, fields: Object.keys(body) } };
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/services/{id}',
    summary: 'Remove a service; its mock entries stay',
    tag: 'services',
    params: IdParam,
    responses: { 204: { description: 'Removed' } },
    async handler({ cradle, tenant, params }) {
      await cradle.services.remove(tenant, params.id);
      return { status: 204, activity: { service_id: params.id } };
    },
  }),
];
