import { Type } from '@sinclair/typebox';
import { MockLibrary } from '../../agent/library.js';
import { defineRoute, type RouteSpec } from '../route.js';
import { Id, ListEnvelope, listEnvelope, Pagination } from '../schema.js';

const ISO = '^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:\\d{2})?)?$';
const Body = Type.Union([Type.String(), Type.Object({ b64: Type.String(), size_bytes: Type.Integer() })]);
const Headers = Type.Record(Type.String(), Type.Union([Type.String(), Type.Array(Type.String())]));

const TrafficSchema = Type.Object({
  id: Type.String(),
  tenant: Type.String(),
  service_id: Type.String(),
  recorded_at: Type.String(),
  mode: Type.String(),
  request: Type.Object({ method: Type.String(), uri: Type.String({ description: 'Path and query as sent upstream (a path prefix binding is stripped).' }), headers: Headers, body: Body }),
  response: Type.Union([Type.Object({ status: Type.Integer(), headers: Headers, body: Body }), Type.Null()]),
  timings: Type.Object({ started_at: Type.String(), upstream_ms: Type.Union([Type.Number(), Type.Null()]), total_ms: Type.Number() }),
});

const UnmatchedSchema = Type.Object({
  service_id: Type.String(),
  method: Type.String(),
  path: Type.String(),
  query: Type.String(),
  count: Type.Integer(),
  first_seen_at: Type.String(),
  last_seen_at: Type.String(),
  hint: Type.Unknown({ description: '{nearest: [{id, method, uri_template, differs: [...]}]}' }),
});

/** Recorded traffic, unmatched requests, coverage. */
export const trafficRoutes: RouteSpec[] = [
  defineRoute({
    method: 'GET',
    path: '/v1/traffic',
    summary: 'Browse recorded traffic, newest first (imports new JSONL lines first)',
    tag: 'traffic',
    query: Type.Composite([
      Pagination,
      Type.Object({
        service_id: Type.Optional(Id),
        method: Type.Optional(Type.String({ pattern: '^[A-Za-z]{1,16}$' })),
        path_prefix: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, pattern: '^/' })),
        status: Type.Optional(Type.Integer({ minimum: 100, maximum: 599 })),
        since: Type.Optional(Type.String({ pattern: ISO, description: 'ISO-8601; recorded at or after.' })),
        until: Type.Optional(Type.String({ pattern: ISO, description: 'ISO-8601; recorded before.' })),
      }),
    ]),
    responses: { 200: { description: 'A page of traffic records', schema: ListEnvelope(TrafficSchema) } },
    async handler({ cradle, tenant, query }) {
      await cradle.sync.runOnce();
      const page = await cradle.agentData.trafficPage(tenant, query.limit, query.offset, query);
      return { body: listEnvelope(page.data, page.total, query) };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/mocks/unmatched',
    summary: 'Requests that found no mock in MOCK mode, with counts, last seen and the nearest entries',
    tag: 'mocks',
    query: Type.Composite([Pagination, Type.Object({ service_id: Type.Optional(Id) })]),
    responses: { 200: { description: 'A page of unmatched request shapes, most recent first', schema: ListEnvelope(UnmatchedSchema) } },
    async handler({ cradle, tenant, query }) {
      const page = await cradle.agentData.unmatchedPage(tenant, query.limit, query.offset, query.service_id);
      return { body: listEnvelope(page.data, page.total, query) };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/mocks/coverage',
    summary: 'Per endpoint (service, method, URI template): mock hits and misses',
    tag: 'mocks',
    query: Type.Object({ service_id: Type.Optional(Id) }),
    responses: {
      200: {
        description: 'Endpoints of the library plus unmocked endpoints that were asked for',
        schema: Type.Object({
          data: Type.Array(Type.Object({ service_id: Type.String(), method: Type.String(), uri_template: Type.String(), entries: Type.Integer(), hits: Type.Integer(), misses: Type.Integer(), mocked: Type.Boolean() })),
          total: Type.Integer(),
        }),
      },
    },
    async handler({ cradle, tenant, query }) {
      const [entries, unmatched] = await Promise.all([cradle.mocks.all(tenant), cradle.agentData.allUnmatched(tenant)]);
      const wanted = entries.filter((e) => !query.service_id || e.service_id === query.service_id);
      const library = new MockLibrary(wanted);
      const rows = new Map<string, { service_id: string; method: string; uri_template: string; entries: number; hits: number; misses: number; mocked: boolean }>();
      const row = (service_id: string, method: string, uri_template: string, mocked: boolean) => {
        const key = `${service_id} ${method} ${uri_template}`;
        return rows.get(key) ?? rows.set(key, { service_id, method, uri_template, entries: 0, hits: 0, misses: 0, mocked }).get(key)!;
      };
      for (const e of wanted) {
        const r = row(e.service_id, e.method, e.uri_template, true);
        r.entries++;
        r.hits += e.hit_count;
      }
      for (const u of unmatched) {
        if (query.service_id && u.service_id !== query.service_id) continue;
        row(u.service_id, u.method, library.endpointOf(u.service_id, u.method, u.path) ?? u.path, false).misses += u.count;
      }
      const data = [...rows.values()].sort((a, b) => a.service_id.localeCompare(b.service_id) || a.uri_template.localeCompare(b.uri_template) || a.method.localeCompare(b.method));
      return { body: { data, total: data.length } };
    },
  }),
];
