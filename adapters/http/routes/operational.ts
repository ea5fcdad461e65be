import { Type } from '@sinclair/typebox';
import { mergeTenantConfig, TENANT_SETTINGS, validateTenantSetting } from '../../../kernel/config.js';
import { AppError } from '../../../kernel/errors.js';
import { ONBOARDING_STEPS } from '../../store/repositories/milestones.js';
import { mintApiKey } from '../../runtime.js';
import { SESSION_COOKIE } from '../compile-route.js';
import { defineRoute, type RouteSpec } from '../route.js';
import { ListEnvelope, listEnvelope, Pagination } from '../schema.js';

const ApiKeySchema = Type.Object({
  id: Type.String(),
  prefix: Type.String({ description: 'First 12 characters of the key.' }),
  name: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
  last_used_at: Type.Union([Type.String(), Type.Null()]),
  revoked_at: Type.Union([Type.String(), Type.Null()]),
});

const ActivitySchema = Type.Object({
  id: Type.String(),
  at: Type.String(),
  actor: Type.Union([Type.String(), Type.Null()], { description: 'Id of the API key that made the call.' }),
  action: Type.String(),
  method: Type.String(),
  path: Type.String(),
  status: Type.Integer(),
  request_id: Type.String(),
  detail: Type.Record(Type.String(), Type.Unknown()),
});

const ConfigView = Type.Object({
  config: Type.Record(Type.String(), Type.Unknown(), { description: 'Defaults merged with the tenant overrides.' }),
  overrides: Type.Record(Type.String(), Type.Unknown()),
  settings: Type.Record(Type.String(), Type.Object({ default: Type.Unknown(), description: Type.String(), schema: Type.Unknown() })),
});

const ConfigKeyParam = Type.Object({ key: Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z_]+$' }) });

function configView(overrides: Record<string, unknown>) {
  const settings = Object.fromEntries(Object.entries(TENANT_SETTINGS).map(([k, s]) => [k, { default: s.default, description: s.description, schema: s.schema }]));
  return { config: mergeTenantConfig(overrides), overrides, settings };
}

/** API keys, sessions, config, activity, onboarding. */
export const operationalRoutes: RouteSpec[] = [
  defineRoute({
    method: 'GET',
    path: '/v1/api-keys',
    summary: 'List API keys: prefix and metadata, never the raw key',
    tag: 'api-keys',
    query: Pagination,
    responses: { 200: { description: 'A page of keys, newest first', schema: ListEnvelope(ApiKeySchema) } },
    async handler({ cradle, tenant, query }) {
      const page = await cradle.apiKeys.page(tenant, query.limit, query.offset);
      return { body: listEnvelope(page.data, page.total, query) };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/api-keys/generate',
    summary: 'Generate a key; the raw key is in this response only',
    tag: 'api-keys',
    body: Type.Object({ name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })) }, { additionalProperties: false }),
    responses: { 201: { description: 'The new key', schema: Type.Composite([ApiKeySchema, Type.Object({ api_key: Type.String({ description: 'The raw key, shown once.' }) })]) } },
    async handler({ cradle, body }) {
      const { raw, key } = await mintApiKey(cradle, { name: body.name ?? null });
      return { status: 201, body: { ...key, api_key: raw }, activity: { key_id: key.id, prefix: key.prefix } };
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/v1/api-keys',
    summary: 'Revoke the key that makes this call',
    tag: 'api-keys',
    responses: { 200: { description: 'Revoked', schema: Type.Object({ id: Type.String(), revoked: Type.Boolean() }) } },
    async handler({ cradle, tenant, apiKeyId }) {
      await cradle.apiKeys.revoke(tenant, apiKeyId!);
      return { body: { id: apiKeyId, revoked: true }, activity: { key_id: apiKeyId } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/session',
    summary: 'Dashboard login: trade an API key for the service_session cookie',
    tag: 'session',
    auth: false,
    allowWhileTransitioning: true,
    noActivity: true,
    body: Type.Object({ api_key: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false }),
    responses: { 200: { description: 'Logged in; cookie set', schema: Type.Object({ expires_at: Type.String() }) } },
    async handler({ cradle, tenant, body, ctx }) {
      const key = await cradle.auth.verifyKey(body.api_key);
      if (!key) throw new AppError('unauthenticated', 'the API key is unknown or revoked');
      const session = await cradle.sessions.create(tenant, key.id);
      ctx.cookies.set(SESSION_COOKIE, session.token, { httpOnly: true, sameSite: 'lax', secure: ctx.secure, expires: session.expires_at, overwrite: true });
      return { body: { expires_at: session.expires_at.toISOString() } };
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/v1/session',
    summary: 'Dashboard logout',
    tag: 'session',
    allowWhileTransitioning: true,
    noActivity: true,
    responses: { 204: { description: 'Logged out; cookie cleared' } },
    async handler({ cradle, tenant, ctx }) {
      const token = ctx.cookies.get(SESSION_COOKIE);
      if (token) await cradle.sessions.remove(tenant, token);
      ctx.cookies.set(SESSION_COOKIE, null, { httpOnly: true, sameSite: 'lax' });
      return { status: 204 };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/config',
    summary: 'Config: defaults merged with the tenant overrides',
    tag: 'config',
    responses: { 200: { description: 'The merged config', schema: ConfigView } },
    handler: async ({ cradle, tenant }) => ({ body: configView(await cradle.tenantConfig.overrides(tenant)) }),
  }),
  defineRoute({
    method: 'PUT',
    path: '/config/{key}',
    summary: 'Upsert a tenant override; the agent follows within a second',
    tag: 'config',
    params: ConfigKeyParam,
    body: Type.Object({ value: Type.Unknown({ description: 'Checked against the setting’s schema (see GET /config settings).' }) }, { additionalProperties: false }),
    responses: { 200: { description: 'The merged config after the change', schema: ConfigView } },
    async handler({ cradle, tenant, params, body }) {
      if (!Object.hasOwn(TENANT_SETTINGS, params.key)) throw new AppError('not_found', `config key '${params.key}' does not exist; known keys: ${Object.keys(TENANT_SETTINGS).join(', ')}`);
      const value = validateTenantSetting(params.key, body.value);
      await cradle.tenantConfig.set(tenant, params.key, value);
      return { body: configView(await cradle.tenantConfig.overrides(tenant)), activity: { key: params.key } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/activity',
    summary: 'Recent activity: one record per mutating call, newest first',
    tag: 'activity',
    query: Type.Composite([Pagination, Type.Object({ action: Type.Optional(Type.String({ maxLength: 200 })) })]),
    responses: { 200: { description: 'A page of activity', schema: ListEnvelope(ActivitySchema) } },
    async handler({ cradle, tenant, query }) {
      const page = await cradle.activity.page(tenant, query.limit, query.offset, { action: query.action });
      return { body: listEnvelope(page.data, page.total, query) };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/onboarding/status',
    summary: 'The five-step onboarding checklist',
    tag: 'onboarding',
    responses: {
      200: {
        description: 'Each step and when it was first done',
        schema: Type.Object({
          steps: Type.Array(Type.Object({ id: Type.String(), title: Type.String(), done: Type.Boolean(), completed_at: Type.Union([Type.String(), Type.Null()]) })),
          completed: Type.Integer(),
          total: Type.Integer(),
        }),
      },
    },
    async handler({ cradle, tenant }) {
      const reached = await cradle.milestones.reached(tenant);
      const steps = ONBOARDING_STEPS.map((s) => ({ id: s.id, title: s.title, done: reached.has(s.id), completed_at: reached.get(s.id) ?? null }));
      return { body: { steps, completed: steps.filter((s) => s.done).length, total: steps.length } };
    },
  }),
];
