import { Agent, request } from 'undici';
import { encodeBody, HOP_BY_HOP_HEADERS, UNREPLAYED_HEADERS, type RecordedBody, type RecordedHeaders } from '../../kernel/domain/index.js';
import { AppError } from '../../kernel/errors.js';
import type { Exchange } from './exchange.js';
import { recordHeaders, sendError } from './exchange.js';


/** What forwarding saw, for the recorder. */
export interface ForwardOutcome {
  response: { status: number; headers: RecordedHeaders; body: RecordedBody; body_truncated?: boolean } | null;
  error?: string;
  upstreamMs: number | null;
}

function outgoingHeaders(raw: readonly string[]): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (UNREPLAYED_HEADERS.has(name)) continue;
    const prev = out[name];
    out[name] = prev === undefined ? raw[i + 1]! : Array.isArray(prev) ? [...prev, raw[i + 1]!] : [prev, raw[i + 1]!];
  }
  return out;
}

/** The upstream URL of an exchange: the service's base URL (with any base path) plus the URI. */
export function upstreamUrl(base: string, uri: string): string {
  return `${base.replace(/\/+$/, '')}${uri.startsWith('/') ? uri : `/${uri}`}`;
}

/**
 * Sends an exchange upstream with undici (pooled keep-alive connections) and streams the answer
 * back as it arrives, byte for byte (no decompression). When `capture` is set, keeps up to that
 * many response bytes for the record.
 * @public
 */
export class Forwarder {
  readonly #dispatcher = new Agent({ connections: 256, headersTimeout: 30_000, bodyTimeout: 30_000, keepAliveTimeout: 10_000 });

  async forward(ex: Exchange, capture: number | null): Promise<ForwardOutcome> {
    const started = performance.now();
    let upstream;
    try {
      const headers = outgoingHeaders(ex.req.rawHeaders);
      upstream = await request(upstreamUrl(ex.service.upstream_url, ex.uri), {
        method: ex.method as 'GET',
        headers,
        body: ex.body.length || !['GET', 'HEAD'].includes(ex.method) ? ex.body : undefined,
        dispatcher: this.#dispatcher,
      });
    } catch (err) {
      const detail = `upstream ${new URL(ex.service.upstream_url).host} of service ${ex.service.id} is unavailable: ${(err as Error).message}`;
      sendError(ex.res, 502, new AppError('upstream_unavailable', detail).toBody());
      return { response: null, error: (err as Error).message, upstreamMs: null };
    }
    const raw = upstream.headers;
    const headerList: string[] = [];
    for (const [name, value] of Object.entries(raw)) {
      if (value === undefined) continue;
      for (const v of Array.isArray(value) ? value : [value]) headerList.push(name, v);
    }
    const passOn: string[] = [];
    for (let i = 0; i < headerList.length; i += 2) if (!HOP_BY_HOP_HEADERS.has(headerList[i]!)) passOn.push(headerList[i]!, headerList[i + 1]!);
    ex.res.writeHead(upstream.statusCode, passOn);
    const chunks: Buffer[] = [];
    let kept = 0;
    let truncated = false;
    try {
      for await (const chunk of upstream.body) {
        const buf = chunk as Buffer;
        if (capture !== null) {
          if (kept + buf.length <= capture) {
            chunks.push(buf);
            kept += buf.length;
          } else truncated = true;
        }
        if (!ex.res.write(buf) && !ex.res.destroyed) await new Promise((r) => {
          ex.res.once('drain', r);
          ex.res.once('close', r);
        });
      }
      ex.res.end();
    } catch (err) {
      ex.res.destroy(err as Error);
      return { response: { status: upstream.statusCode, headers: recordHeaders(headerList), body: encodeBody(Buffer.concat(chunks)), body_truncated: true }, error: (err as Error).message, upstreamMs: performance.now() - started };
    }
    const upstreamMs = performance.now() - started;
    return {
      response: { status: upstream.statusCode, headers: recordHeaders(headerList), body: encodeBody(Buffer.concat(chunks)), ...(truncated && { body_truncated: true }) },
      upstreamMs,
    };
  }

  async close(): Promise<void> {
    await this.#dispatcher.close();
  }
}
