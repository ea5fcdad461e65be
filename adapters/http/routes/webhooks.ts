import { Type } from '@sinclair/typebox';
import type { WebhookCapture } from '../../../kernel/domain/index.js';
import { AppError } from '../../../kernel/errors.js';
import { checkReplayTarget, systemResolver } from '../../replay/guard.js';
import { sendReplay } from '../../replay/replay.js';
import type { Cradle } from '../../runtime.js';
import { defineRoute, type RouteSpec } from '../route.js';
import { Id, ListEnvelope, listEnvelope, Pagination } from '../schema.js';

const KINDS = ['payments', 'github', 'standard', 'generic'] as const;
const SignatureKind = Type.Union(KINDS.map((k) => Type.Literal(k)));
const Body = Type.Union([Type.String(), Type.Object({ b64: Type.String(), size_bytes: Type.Integer() })], {
  description: 'UTF-8 text as a string; any other bytes as {b64, size_bytes}.',
});
const Headers = Type.Record(Type.String(), Type.Union([Type.String(), Type.Array(Type.String())]));

const ServiceParam = Type.Object({ service_id: Id });
const CaptureParams = Type.Object({ service_id: ServiceParam.properties.service_id, webhook_id: Type.String({ pattern: '^wh_[0-9a-f]{16}$' }) });

const CaptureSchema = Type.Object({
  id: Type.String(),
  received_at: Type.String(),
  tenant: Type.String(),
  service_id: Type.String(),
  method: Type.String(),
  uri: Type.String(),
  headers: Type.Record(Type.String(), Type.String()),
  body: Body,
  signature_kind: SignatureKind,
});

const ParsedSignature = Type.Union([
  Type.Object({
    scheme: Type.String(),
    timestamp: Type.Union([Type.Integer(), Type.Null()], { description: 'Seconds since the epoch, when the scheme carries one.' }),
    nonce: Type.Union([Type.String(), Type.Null()], { description: 'Nonce or message id (webhook-id, X-GitHub-Delivery).' }),
    signature_count: Type.Integer(),
    versions: Type.Array(Type.String(), { description: 'Algorithm or version tag of each signature: v1, sha256, …' }),
    headers: Type.Array(Type.String(), { description: 'The headers the breakdown was read from.' }),
  }),
  Type.Null(),
]);

const ReplayBody = Type.Object(
  {
    target_url: Type.String({ minLength: 1, maxLength: 2048, description: 'Absolute http:// or https:// URL; checked by the replay guard before any connection.' }),
    preserve_signature: Type.Boolean({ default: true, description: 'false strips Payments-Signature, X-Hub-Signature(-256) and webhook-signature.' }),
    timeout_seconds: Type.Integer({ minimum: 1, maximum: 60, default: 10 }),
  },
  { additionalProperties: false },
);

const ReplayResultSchema = Type.Object({
  webhook_id: Type.String(),
  target_url: Type.String(),
  status_code: Type.Integer(),
  response_headers: Headers,
  response_body: Body,
  response_truncated: Type.Boolean({ description: 'True when the target answered more than 1 MiB; the body holds the first 1 MiB.' }),
  elapsed_ms: Type.Number(),
});

/**
 * A capture of the tenant's service, or 404. A capture the agent wrote but the sync layer has
 * not imported yet is imported first, so a webhook is readable as soon as its sender got 200.
 */
async function captureOf(cradle: Cradle, tenant: string, serviceId: string, id: string): Promise<WebhookCapture> {
  let found = await cradle.agentData.webhook(tenant, serviceId, id);
  if (!found) {
    await cradle.sync.runOnce();
    found = await cradle.agentData.webhook(tenant, serviceId, id);
  }
  if (!found) throw new AppError('not_found', `webhook ${id} of service ${serviceId} not found`);
  return found;
}

/** Captured webhooks: list, read with the parsed signature, delete, and operator-triggered replay. */
export const webhooksRoutes: RouteSpec[] = [
  defineRoute({
    method: 'GET',
    path: '/v1/webhooks/{service_id}',
    summary: 'Captured webhooks of a service, newest first (imports new captures first)',
    tag: 'webhooks',
    params: ServiceParam,
    query: Type.Composite([Pagination, Type.Object({ signature_kind: Type.Optional(SignatureKind) })]),
    responses: { 200: { description: 'A page of captures', schema: ListEnvelope(CaptureSchema) } },
    async handler({ cradle, tenant, params, query }) {
      await cradle.sync.runOnce();
      const page = await cradle.agentData.webhookPage(tenant, params.service_id, query.limit, query.offset, query.signature_kind);
      // A deleted service's captures stay listable; a service that never existed is 404.
      if (page.total === 0 && !(await cradle.servicesCache.get(tenant)).some((s) => s.id === params.service_id) && (!query.signature_kind || (await cradle.agentData.webhookPage(tenant, params.service_id, 1, 0)).total === 0)) {
        throw new AppError('not_found', `service ${params.service_id} not found`);
      }
      return { body: listEnvelope(page.data, page.total, query) };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/webhooks/{service_id}/{webhook_id}',
    summary: 'One capture: headers, body and the parsed signature (timestamp, nonce, scheme, signatures)',
    tag: 'webhooks',
    params: CaptureParams,
    responses: { 200: { description: 'The capture', schema: Type.Composite([CaptureSchema, Type.Object({ parsed_signature: ParsedSignature })]) } },
    async handler({ cradle, tenant, params }) {
      const capture = await captureOf(cradle, tenant, params.service_id, params.webhook_id);
      const parser = cradle.kernel.plugins.ofKind('signature-parser').find((p) => p.instance.kind === capture.signature_kind);
      return { body: { ...capture, parsed_signature: parser?.instance.parse(capture.headers) ?? null } };
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/v1/webhooks/{service_id}/{webhook_id}',
    summary: 'Remove a capture from the database (its JSONL line brings it back at the next sync until the line is removed)',
    tag: 'webhooks',
    params: CaptureParams,
    responses: { 204: { description: 'Removed from the database' } },
    async handler({ cradle, tenant, params }) {
      await captureOf(cradle, tenant, params.service_id, params.webhook_id);
      await cradle.agentData.deleteWebhook(tenant, params.service_id, params.webhook_id);
      return { status: 204, activity: { webhook_id: params.webhook_id, service_id: params.service_id } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/webhooks/{service_id}/{webhook_id}/replay',
    summary: 'Replay a capture to a target: same body and headers, POST, never re-signed, behind the SSRF guard',
    tag: 'webhooks',
    params: CaptureParams,
    body: ReplayBody,
    responses: { 200: { description: "The target's answer", schema: ReplayResultSchema } },
    async handler({ cradle, tenant, params, body }) {
      const capture = await captureOf(cradle, tenant, params.service_id, params.webhook_id);
      const target = await checkReplayTarget(body.target_url, { allowLocal: cradle.config.allowLocalReplay, resolve: systemResolver, timeoutMs: body.timeout_seconds * 1000 });
      const result = await sendReplay(capture, target, { preserveSignature: body.preserve_signature, timeoutMs: body.timeout_seconds * 1000 });
      return {
        body: { webhook_id: capture.id, ...result },
        // Only the target's origin: receivers often carry a token in the path or query
        // (Slack's /services/T…/B…/<token>, Discord's /api/webhooks/<id>/<token>).
        activity: { webhook_id: capture.id, target: target.url.origin, preserve_signature: body.preserve_signature, status_code: result.status_code, elapsed_ms: result.elapsed_ms },
      };
    },
  }),
];
