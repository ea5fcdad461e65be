import { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import { AppError } from '../../../kernel/errors.js';
import { assertExportAllowed, EXPORT_FORMATS, exportLibrary } from '../../../pipelines/library-export.js';
import { PACKAGE_VERSION } from '../../version.js';
import { defineRoute, type RouteSpec } from '../route.js';
import { Id, IdParam, ListEnvelope, listEnvelope, Pagination } from '../schema.js';

const Body = Type.Union([Type.String({ description: 'UTF-8 text' }), Type.Object({ b64: Type.String(), size_bytes: Type.Integer() }, { description: 'Bytes that are not UTF-8, base64' }), Type.Null()]);
const Headers = Type.Record(Type.String(), Type.Union([Type.String(), Type.Array(Type.String())]), { description: 'Lower-case names; a repeated header (Set-Cookie) is an array.' });

/** The mock entry model, as the API shows it. @public */
export const MockEntrySchema = Type.Object({
  id: Type.String({ description: 'mock_…' }),
  service_id: Type.String(),
  service_upstream_id: Type.String({ description: "The service's upstream URL when the entry was made; kept when the service is deleted." }),
  method: Type.String(),
  path: Type.String({ description: 'A concrete path relative to the upstream, e.g. /pets/1; matched exactly.' }),
  uri_template: Type.String({ description: 'Its template, e.g. /pets/{id}; matched when no exact path does. Equal to path when concrete.' }),
  query: Type.Union([Type.Record(Type.String(), Type.Array(Type.String())), Type.Null()], { description: 'Parameters the request must carry with these values (others may come too); null matches any query.' }),
  body_matcher: Type.Union([Type.Object({ equals: Type.String() }), Type.Object({ json: Type.Unknown() }), Type.Null()], { description: 'The request body must equal this text or JSON value; null matches any body.' }),
  response: Type.Object({ status: Type.Integer(), headers: Headers, body: Body }),
  source: Type.String({ description: '`recorded`, `har`, `postman`, `openapi`, or the format of an importer plugin.' }),
  origin: Type.Union([Type.String(), Type.Null()], { description: 'Where in its source the entry came from, e.g. log.entries[17] or paths["/pets"].get.responses["200"].' }),
  scrubbed: Type.Boolean({ description: 'True once secrets and personal data are scrubbed, or when the entry was made up from a description.' }),
  created_at: Type.String(),
  last_hit_at: Type.Union([Type.String(), Type.Null()]),
  hit_count: Type.Integer(),
});

/** The mock library: list, export, delete. */
export const libraryRoutes: RouteSpec[] = [
  defineRoute({
    method: 'GET',
    path: '/mocks',
    summary: 'List mock entries, oldest first',
    tag: 'mocks',
    query: Type.Composite([Pagination, Type.Object({ method: Type.Optional(Type.String({ pattern: '^[A-Za-z]{1,16}$' })), service_id: Type.Optional(Id) })]),
    responses: { 200: { description: 'A page of mock entries', schema: ListEnvelope(MockEntrySchema) } },
    async handler({ cradle, tenant, query }) {
      const page = await cradle.mocks.page(tenant, query.limit, query.offset, query);
      return { body: listEnvelope(page.data, page.total, query) };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/mocks/export',
    summary: 'Export the library: native, HAR 1.2 or WireMock mappings',
    tag: 'mocks',
    query: Type.Object({
      scrubbed_only: Type.Boolean({ default: true, description: 'Only scrubbed entries. false exports everything, unless the tenant setting require_scrubbing is true (409).' }),
      format: Type.Union(EXPORT_FORMATS.map((f) => Type.Literal(f)), { default: 'native', description: 'native ({format, version, entries}), har (HAR 1.2), or wiremock ({mappings}).' }),
      service_id: Type.Optional(Id),
    }),
    responses: {
      200: { description: 'The export, streamed as JSON; native: {format, version, exported_at, scrubbed_only, entries: MockEntry[]}', schema: Type.Object({}, { additionalProperties: true }) },
      409: { description: 'scrubbing_required: unscrubbed export while require_scrubbing is true' },
    },
    async handler({ cradle, tenant, query }) {
      assertExportAllowed(query.scrubbed_only, await cradle.tenantConfig.overrides(tenant));
      const services = cradle.servicesCache.peek(tenant) ?? (await cradle.servicesCache.get(tenant));
      const text = exportLibrary({ tenant, mocks: cradle.mocks, services, version: PACKAGE_VERSION }, { format: query.format, scrubbedOnly: query.scrubbed_only, serviceId: query.service_id });
      return {
        body: Readable.from(text),
        headers: { 'Content-Type': 'application/json; charset=utf-8', 'Content-Disposition': `attachment; filename="understudy-library-${query.format}.json"` },
      };
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/mocks/{id}',
    summary: 'Delete one mock entry',
    tag: 'mocks',
    params: IdParam,
    responses: { 204: { description: 'Deleted' }, 404: { description: 'No such entry' } },
    async handler({ cradle, tenant, params }) {
      if (!(await cradle.mocks.remove(tenant, params.id))) throw new AppError('not_found', `no mock entry ${params.id}`);
      return { status: 204, activity: { mock_id: params.id } };
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/mocks',
    summary: "Clear the tenant's library (or one service's entries)",
    tag: 'mocks',
    query: Type.Object({ service_id: Type.Optional(Id) }),
    responses: { 200: { description: 'How many entries were deleted', schema: Type.Object({ deleted: Type.Integer() }) } },
    async handler({ cradle, tenant, query }) {
      const deleted = await cradle.mocks.clear(tenant, query);
      return { body: { deleted }, activity: { deleted, ...(query.service_id && { service_id: query.service_id }) } };
    },
  }),
];
