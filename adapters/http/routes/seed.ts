import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Type } from '@sinclair/typebox';
import { checkMediaType, importerFor, runSeed } from '../../../pipelines/seed.js';
import type { BodyStream } from '../body.js';
import { defineRoute, type RouteSpec } from '../route.js';
import { Id } from '../schema.js';

/** Seed documents may be this large (DECISIONS "Lists and limits"); they are read as streams. */
export const SEED_BODY_LIMIT = 100 * 1024 * 1024;

const ImportReportSchema = Type.Object({
  format: Type.String(),
  created: Type.Integer(),
  updated: Type.Integer({ description: 'Entries that existed (same service, method, path, query, body matcher and status) and were replaced.' }),
  duplicates: Type.Integer({ description: 'Exchanges that repeated an earlier one of the document and collapsed into it.' }),
  skipped: Type.Array(Type.Object({ where: Type.String(), why: Type.String() }), { description: 'At most 1,000 listed.' }),
  skipped_total: Type.Integer(),
  warnings: Type.Array(Type.String()),
  scrubbed: Type.Boolean({ description: 'Whether the entries went through the scrubbers.' }),
  findings: Type.Record(Type.String(), Type.Integer(), { description: 'What the scrubbers found, by rule: counts, never values.' }),
});

const SeedQuery = Type.Object({
  service_id: Type.Optional(Type.String({ ...Id, description: 'The service the entries belong to; required except for har, where it narrows the hosts taken.' })),
  scrub: Type.Optional(
    Type.Boolean({
      description:
        'Run the entries through the scrubbers before they are written, as a transition does recorded traffic, each entry with its service\'s scrub rules. Default true for captured traffic (har, postman), false for descriptions (openapi). false stores captured entries as they are, marked `scrubbed: false`.',
    }),
  ),
});

function seedRoute(path: string, summary: string, format: string | null): RouteSpec {
  return defineRoute({
    method: 'POST',
    path,
    summary,
    tag: 'seed',
    streamBody: { limit: SEED_BODY_LIMIT },
    ...(format === null && { params: Type.Object({ format: Type.String({ pattern: '^[a-z0-9-]{1,40}$', description: 'The format an installed importer plugin reads.' }) }) }),
    query: SeedQuery,
    responses: {
      200: { description: 'The import report; an import is all or nothing', schema: ImportReportSchema },
      404: { description: 'No such service, or no importer for the format' },
      413: { description: 'payload_too_large: over 100 MiB' },
      415: { description: "unsupported_media_type: a media type the importer does not read" },
    },
    async handler({ cradle, tenant, params, query, body }) {
      const doc = body as BodyStream;
      const chosen = format ?? String(params.format);
      checkMediaType(importerFor(cradle.kernel, chosen), doc.mediaType);
      const services = cradle.servicesCache.peek(tenant) ?? (await cradle.servicesCache.get(tenant));
      // The upload goes to a file first: the import's transaction then never waits on a slow
      // client (on PGlite it holds the one connection every other query needs).
      const dir = await mkdtemp(join(tmpdir(), 'understudy-seed-'));
      try {
        const file = join(dir, 'document');
        await pipeline(Readable.from(doc.chunks), createWriteStream(file, { mode: 0o600 }));
        const report = await runSeed(
          { tenant, kernel: cradle.kernel, store: cradle.store, mocks: cradle.mocks, tenantConfig: cradle.tenantConfig, tenantSecrets: cradle.tenantSecrets, services },
          { format: chosen, mediaType: doc.mediaType, source: createReadStream(file, { highWaterMark: 1 << 20 }), serviceId: query.service_id, size: doc.length, scrub: query.scrub },
        );
        return { body: report, activity: { format: report.format, service_id: query.service_id ?? null, created: report.created, updated: report.updated, skipped: report.skipped_total } };
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  });
}

/**
 * Cold start: the document is the request body (JSON, or YAML for Postman and OpenAPI), read as
 * a stream. SPEC's three formats, and any format an importer plugin adds, at `/v1/seed/{format}`.
 */
export const seedRoutes: RouteSpec[] = [
  seedRoute('/v1/seed/har', 'Cold start from a HAR 1.1/1.2 capture (browser or proxy export)', 'har'),
  seedRoute('/v1/seed/postman', 'Cold start from a Postman collection v2.0/v2.1 (saved examples become mocks)', 'postman'),
  seedRoute('/v1/seed/openapi', 'Cold start from an OpenAPI 3.0/3.1 document, JSON or YAML', 'openapi'),
  seedRoute('/v1/seed/{format}', 'Cold start through any installed importer plugin (its format names the route)', null),
];
