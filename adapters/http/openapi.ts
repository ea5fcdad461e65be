import type { TObject, TSchema } from '@sinclair/typebox';
import type { OpenAPIV3_1 } from 'openapi-types';
import { ERRORS } from '../../kernel/errors.js';
import type { RouteSpec } from './route.js';
import { ErrorBodySchema } from './schema.js';

/** TypeBox schemas are JSON Schema already; this drops TypeBox's symbol keys and `$id`s. */
function plain(schema: TSchema): OpenAPIV3_1.SchemaObject {
  return JSON.parse(JSON.stringify(schema)) as OpenAPIV3_1.SchemaObject;
}

function parameters(where: 'path' | 'query', schema: TObject | undefined, path: string): OpenAPIV3_1.ParameterObject[] {
  const names = where === 'path' ? [...path.matchAll(/\{([A-Za-z0-9_]+)\}/g)].map((m) => m[1]!) : Object.keys(schema?.properties ?? {});
  return names.map((name) => {
    const prop = schema?.properties[name];
    return {
      name,
      in: where,
      required: where === 'path' || (schema?.required ?? []).includes(name),
      schema: prop ? plain(prop) : { type: 'string' },
      ...(prop?.description && { description: prop.description as string }),
    } as OpenAPIV3_1.ParameterObject;
  });
}

const errorResponse = (description: string): OpenAPIV3_1.ResponseObject => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});

function operation(spec: RouteSpec): OpenAPIV3_1.OperationObject {
  const built = Boolean(spec.handler);
  const responses: OpenAPIV3_1.ResponsesObject = {};
  if (built) {
    for (const [status, r] of Object.entries(spec.responses ?? { 200: { description: 'OK' } })) {
      responses[status] = r.schema ? { description: r.description, content: { 'application/json': { schema: plain(r.schema) } } } : { description: r.description };
    }
  }
  if (spec.auth !== false && spec.auth !== 'optional') responses['401'] = errorResponse('unauthenticated: missing, unknown or revoked API key');
  if (spec.tier && spec.tier !== 'free') responses['403'] = errorResponse(`feature_gated: needs the ${spec.tier} tier (feature ${spec.feature ?? spec.tag})`);
  if (built && (spec.body || spec.query || spec.params)) responses['422'] = errorResponse('validation_error: the input is invalid; detail names the field');
  if (spec.rateLimit) responses['429'] = errorResponse(`rate_limited: bucket ${spec.rateLimit}`);
  if (spec.method !== 'GET' && !spec.allowWhileTransitioning) responses['503'] = errorResponse('transitioning: read-only while a transition runs; see Retry-After');
  if (!built) responses['501'] = errorResponse('not_implemented: part of the contract, not built yet');
  const op: OpenAPIV3_1.OperationObject = {
    operationId: `${spec.method.toLowerCase()}${spec.path.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
    summary: spec.summary,
    tags: [spec.tag],
    parameters: [...parameters('path', spec.params, spec.path), ...parameters('query', spec.query, spec.path)],
    responses,
    ...(spec.deprecated && { deprecated: true }),
    ...(spec.auth === false ? { security: [] } : spec.auth === 'optional' ? { security: [{}, { apiKey: [] }, { session: [] }] } : {}),
  };
  if (spec.body) op.requestBody = { required: true, content: { 'application/json': { schema: plain(spec.body) } } };
  if (spec.idempotent) op.parameters!.push({ name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', maxLength: 255 } });
  const extensions = op as Record<string, unknown>;
  extensions['x-tier'] = spec.tier ?? 'free';
  if (spec.rateLimit) extensions['x-rate-limit-bucket'] = spec.rateLimit;
  if (!built) extensions['x-not-implemented'] = true;
  return op;
}

/**
 * The OpenAPI 3.1 document of every route, built from the same RouteSpecs (and the same TypeBox
 * schemas) that route and validate requests, so the two cannot disagree.
 * @public
 */
export function buildOpenApi(routes: readonly RouteSpec[], version: string): OpenAPIV3_1.Document {
  const paths: OpenAPIV3_1.PathsObject = {};
  for (const spec of routes) {
    const item = (paths[spec.path] ??= {}) as Record<string, OpenAPIV3_1.OperationObject>;
    item[spec.method.toLowerCase()] = operation(spec);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Understudy control plane',
      version,
      description: 'Record HTTP traffic, scrub it, and serve it back as mocks. Errors answer `{detail, error_code}`; see docs/errors.md.',
    },
    servers: [{ url: '/' }],
    security: [{ apiKey: [] }, { session: [] }],
    paths,
    components: {
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'X-Service-Api-Key', description: 'X-API-Key is accepted as an alias.' },
        session: { type: 'apiKey', in: 'cookie', name: 'service_session' },
      },
      schemas: {
        Error: { ...plain(ErrorBodySchema), properties: { ...plain(ErrorBodySchema).properties, error_code: { type: 'string', enum: Object.keys(ERRORS) } } },
      },
    },
  };
}
