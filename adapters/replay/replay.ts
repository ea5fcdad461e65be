import type { LookupFunction } from 'node:net';
import { Agent, request } from 'undici';
import { decodeBody, encodeBody, UNREPLAYED_HEADERS, type RecordedBody, type RecordedHeaders, type WebhookCapture } from '../../kernel/domain/index.js';
import { AppError } from '../../kernel/errors.js';
import { recordHeaders } from '../agent/exchange.js';
import type { CheckedTarget } from './guard.js';

/** Signature headers of the schemes SPEC names; `preserve_signature: false` drops them all. */
export const SIGNATURE_HEADERS: readonly string[] = ['payments-signature', 'x-hub-signature-256', 'x-hub-signature', 'webhook-signature'];

/** Largest target response body kept in a replay result. */
const REPLAY_RESPONSE_CAP = 1024 * 1024;

/** What a replay answers (SPEC "Replay result"). @public */
export interface ReplayResult {
  target_url: string;
  status_code: number;
  response_headers: RecordedHeaders;
  /** UTF-8 text as a string, anything else as `{b64, size_bytes}`; at most 1 MiB. */
  response_body: RecordedBody;
  response_truncated: boolean;
  /** From sending the request to the end of the response body (or the cap). */
  elapsed_ms: number;
}

/**
 * The captured request as it is replayed: every header but hop-by-hop ones (and signature ones
 * unless preserved), in capture order; the body byte for byte.
 */
function replayRequest(capture: WebhookCapture, preserveSignature: boolean): { headers: Record<string, string>; body: Buffer } {
  const listed = new Set(
    String(capture.headers.connection ?? '')
      .split(',')
      .map((h) => h.trim().toLowerCase())
      .filter(Boolean),
  );
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(capture.headers)) {
    if (UNREPLAYED_HEADERS.has(name) || listed.has(name) || name === 'expect') continue;
    if (!preserveSignature && SIGNATURE_HEADERS.includes(name)) continue;
    headers[name] = value;
  }
  return { headers, body: decodeBody(capture.body) };
}

/** A lookup that answers only the address the guard checked, in whichever form net asks for. */
function pinnedLookup(target: CheckedTarget): LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  }) as LookupFunction;
}

/**
 * POSTs a capture to a target the guard accepted. The connection goes to the checked address
 * only (no second lookup), redirects are not followed, and the whole exchange is bounded by
 * `timeoutMs`. Unreachable targets, timeouts and network errors are 502 `replay_upstream_error`.
 * @public
 */
export async function sendReplay(capture: WebhookCapture, target: CheckedTarget, opts: { preserveSignature: boolean; timeoutMs: number }): Promise<ReplayResult> {
  const { headers, body } = replayRequest(capture, opts.preserveSignature);
  const dispatcher = new Agent({
    connect: { lookup: pinnedLookup(target), timeout: opts.timeoutMs },
    headersTimeout: opts.timeoutMs,
    bodyTimeout: opts.timeoutMs,
    connections: 1,
  });
  const started = performance.now();
  const signal = AbortSignal.timeout(opts.timeoutMs);
  const targetUrl = target.url.href;
  try {
    const res = await request(targetUrl, { method: 'POST', headers, body, dispatcher, signal });
    const chunks: Buffer[] = [];
    let kept = 0;
    let truncated = false;
    for await (const chunk of res.body) {
      const buf = chunk as Buffer;
      const room = REPLAY_RESPONSE_CAP - kept;
      chunks.push(buf.length <= room ? buf : buf.subarray(0, room));
      kept += Math.min(buf.length, room);
      if (buf.length > room) {
        truncated = true;
        res.body.destroy();
        break;
      }
    }
    const rawHeaders: string[] = [];
    for (const [name, value] of Object.entries(res.headers)) {
      for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) rawHeaders.push(name, v);
    }
    return {
      target_url: targetUrl,
      status_code: res.statusCode,
      response_headers: recordHeaders(rawHeaders),
      response_body: encodeBody(Buffer.concat(chunks)),
      response_truncated: truncated,
      elapsed_ms: Math.round((performance.now() - started) * 10) / 10,
    };
  } catch (err) {
    const e = err as { code?: string; name?: string; message: string };
    const why = signal.aborted || e.name === 'TimeoutError' || /Timeout/.test(e.code ?? '') ? `no answer within ${opts.timeoutMs / 1000} s` : (e.code ?? e.message);
    throw new AppError('replay_upstream_error', `replay to ${target.url.host} failed: ${why}`);
  } finally {
    dispatcher.destroy().catch(() => undefined);
  }
}
