import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SignatureParser } from '../../kernel/contracts/index.js';
import { encodeBody, type Service, type WebhookCapture } from '../../kernel/domain/index.js';
import { AppError } from '../../kernel/errors.js';
import { readBody, sendError, sendJson } from './exchange.js';
import type { JsonlFiles } from '../volume/jsonl.js';

const COMPONENT_RE = /^[A-Za-z0-9_-]{1,64}$/;
/** `/webhook/{tenant}/{service_id}` and nothing more. */
const PATH_RE = /^\/webhook\/([^/?]*)\/([^/?]*)\/?$/;

/** True when a request path is the webhook capture path. */
export function isWebhookPath(path: string): boolean {
  return path.startsWith('/webhook/');
}

/** The narrowest signature kind whose parser recognises the headers (SPEC's order). */
export function signatureKind(parsers: readonly SignatureParser[], headers: Record<string, string>): WebhookCapture['signature_kind'] {
  for (const p of parsers) if (p.matches(headers)) return p.kind as WebhookCapture['signature_kind'];
  return 'generic';
}


/**
 * Captures an inbound webhook: checks the path, tenant and service, appends one JSONL line to
 * `webhooks/{service_id}.jsonl` (one write, O_APPEND), then answers `{"received":true}` — also
 * when persistence failed, which is counted and logged instead (SPEC: best effort, no retries).
 */
export async function captureWebhook(
  req: IncomingMessage,
  res: ServerResponse,
  deps: {
    tenant: string;
    maxBytes: number;
    services: () => Promise<readonly Service[]>;
    parsers: readonly SignatureParser[];
    files: JsonlFiles;
    onCaptured: (kind: WebhookCapture['signature_kind'], persisted: boolean) => void;
  },
): Promise<void> {
  const uri = req.url ?? '/';
  const path = uri.split('?')[0]!;
  const m = PATH_RE.exec(path);
  if (!m || !COMPONENT_RE.test(m[1]!) || !COMPONENT_RE.test(m[2]!)) {
    req.resume();
    return sendError(res, 404, new AppError('not_found', 'webhook captures go to /webhook/{tenant}/{service_id}, each part [A-Za-z0-9_-]{1,64}').toBody());
  }
  const [, tenant, serviceId] = m as unknown as [string, string, string];
  if (tenant !== deps.tenant) {
    req.resume();
    return sendError(res, 403, new AppError('tenant_isolation', `tenant '${tenant}' is not this deployment's tenant`).toBody());
  }
  if (!(await deps.services()).some((s) => s.id === serviceId)) {
    req.resume();
    return sendError(res, 404, new AppError('not_found', `service '${serviceId}' not found`).toBody());
  }
  const body = await readBody(req, deps.maxBytes);
  if (!body) return sendError(res, 413, new AppError('payload_too_large', `webhook body is larger than ${deps.maxBytes} bytes`).toBody());
  const headers: Record<string, string> = {};
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i]!.toLowerCase();
    headers[name] = name in headers ? `${headers[name]}, ${req.rawHeaders[i + 1]}` : req.rawHeaders[i + 1]!;
  }
  const capture: WebhookCapture = {
    id: `wh_${randomBytes(8).toString('hex')}`,
    received_at: new Date().toISOString(),
    tenant,
    service_id: serviceId,
    method: req.method ?? 'POST',
    uri,
    headers,
    body: encodeBody(body),
    signature_kind: signatureKind(deps.parsers, headers),
  };
  const persisted = await deps.files.append(serviceId, `${JSON.stringify(capture)}\n`, { sync: true });
  deps.onCaptured(capture.signature_kind, persisted);
  sendJson(res, 200, { received: true });
}
