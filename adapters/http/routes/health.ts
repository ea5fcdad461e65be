import { Type } from '@sinclair/typebox';
import { defineRoute, type RouteSpec } from '../route.js';

const Component = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('down'), Type.Literal('not_configured')]),
  checked_at: Type.String(),
  latency_ms: Type.Union([Type.Number(), Type.Null()]),
  stale_for_seconds: Type.Optional(Type.Union([Type.Number(), Type.Null()])),
  detail: Type.Record(Type.String(), Type.Unknown(), { description: 'Raw probe payload; empty for anonymous callers of the summary.' }),
});

/** `GET /health` and `GET /v1/health/summary`. */
export const healthRoutes: RouteSpec[] = [
  defineRoute({
    method: 'GET',
    path: '/health',
    summary: 'Synchronous probe of the database, the agent and the inference server',
    tag: 'health',
    auth: false,
    responses: {
      200: { description: 'The database answers', schema: Type.Object({ status: Type.String(), components: Type.Record(Type.String(), Component) }) },
      503: { description: 'The database does not answer' },
    },
    async handler({ cradle }) {
      const components = await cradle.healthProbes.all();
      const databaseUp = components.database.status === 'ok';
      const allUp = Object.values(components).every((c) => c.status !== 'down');
      return { status: databaseUp ? 200 : 503, body: { status: allUp ? 'ok' : databaseUp ? 'degraded' : 'down', components } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/health/summary',
    summary: 'Cached health, refreshed in the background every 5 s; answers at once during an outage',
    tag: 'health',
    auth: 'optional',
    responses: {
      200: {
        description: 'Per-component status and staleness; `detail` only for authenticated callers',
        schema: Type.Object({ status: Type.String(), components: Type.Record(Type.String(), Component), refresh_interval_seconds: Type.Number(), detail_redacted: Type.Boolean() }),
      },
    },
    handler: ({ cradle, authenticated }) => ({ body: cradle.health.summary(!authenticated) }),
  }),
];
