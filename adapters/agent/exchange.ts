import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Mode, RecordedHeaders, Service } from '../../kernel/domain/index.js';
import type { ErrorBody } from '../../kernel/errors.js';

/** One request the agent handles, with what routing found out. */
export interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  tenant: string;
  service: Service;
  mode: Mode;
  method: string;
  /** Upstream-relative path and query. */
  uri: string;
  path: string;
  search: string;
  body: Buffer;
  bodyTruncated: boolean;
  startedAt: number;
  startedIso: string;
}

/** A mode: how the agent answers an exchange. One file per mode under modes/. */
export interface ModeHandler {
  readonly mode: Mode;
  handle(ex: Exchange): Promise<{ match: 'forwarded' | 'exact' | 'template' | 'miss' | 'upstream_error' }>;
}

/** Headers as records keep them: lower-case names, repeated headers as arrays. */
export function recordHeaders(raw: readonly string[]): RecordedHeaders {
  const out: RecordedHeaders = {};
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    const value = raw[i + 1]!;
    const prev = out[name];
    out[name] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
  }
  return out;
}

/** Sends a JSON body with its length. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

export function sendError(res: ServerResponse, status: number, body: ErrorBody): void {
  sendJson(res, status, body);
}

/** Reads a whole request body; null (and the rest drained) when it passes `limit` bytes. */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        req.removeAllListeners('data');
        req.resume();
        resolve(null);
      } else chunks.push(c);
    });
    req.on('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
