import type { Context } from 'koa';
import getRawBody from 'raw-body';
import { AppError } from '../../kernel/errors.js';

/** Default JSON body limit (DECISIONS "Lists and limits"). */
export const JSON_BODY_LIMIT = 10 * 1024 * 1024;

function hasBody(ctx: Context): boolean {
  const length = ctx.get('content-length');
  if (length !== '') return Number(length) > 0;
  return ctx.get('transfer-encoding') !== '';
}

/**
 * Reads a JSON body: 415 for another media type, 413 over `limit` (checked against
 * Content-Length before reading, and while reading), 422 for malformed JSON. No body reads as
 * undefined.
 */
export async function readJsonBody(ctx: Context, limit: number): Promise<unknown> {
  if (!hasBody(ctx)) return undefined;
  if (!ctx.is('application/json', '+json')) {
    throw new AppError('unsupported_media_type', `send the body as application/json (got ${ctx.get('content-type') || 'no Content-Type'})`);
  }
  let text: string;
  try {
    const length = ctx.get('content-length');
    text = await getRawBody(ctx.req, { length: length === '' ? undefined : length, limit, encoding: 'utf8' });
  } catch (err) {
    const e = err as { type?: string; status?: number };
    if (e.type === 'entity.too.large') throw new AppError('payload_too_large', `body is larger than this route's limit of ${limit} bytes`);
    if (e.type === 'encoding.unsupported' || e.type === 'charset.unsupported') throw new AppError('unsupported_media_type', 'the body charset must be utf-8');
    if (e.type === 'request.size.invalid') throw new AppError('validation_error', 'body: its length does not match Content-Length');
    throw new AppError('validation_error', 'body: the request body could not be read');
  }
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new AppError('validation_error', `body: malformed JSON (${(err as Error).message})`);
  }
}

/** A request body left to the handler to read as a stream (routes with `streamBody`). @public */
export interface BodyStream {
  /** Lower-case media type without parameters; '' when the request named none. */
  mediaType: string;
  /** Content-Length when the client sent one. */
  length: number | null;
  /** The bytes; reading past the route's limit throws 413 `payload_too_large`. */
  chunks: AsyncIterable<Uint8Array>;
}

/**
 * Hands the body over as a stream: 422 when there is none, 413 when Content-Length (at once) or
 * the bytes read (as they arrive) pass `limit`. The media type is the handler's to check.
 */
export function openBodyStream(ctx: Context, limit: number): BodyStream {
  if (!hasBody(ctx)) throw new AppError('validation_error', 'body: required; send the document as the request body');
  const header = ctx.get('content-length');
  const length = header === '' ? null : Number(header);
  const tooLarge = () => new AppError('payload_too_large', `body is larger than this route's limit of ${limit} bytes`);
  if (length !== null && length > limit) throw tooLarge();
  const req = ctx.req;
  async function* chunks(): AsyncIterable<Uint8Array> {
    let seen = 0;
    for await (const chunk of req as AsyncIterable<Buffer>) {
      seen += chunk.byteLength;
      if (seen > limit) throw tooLarge();
      yield chunk;
    }
  }
  return { mediaType: (ctx.get('content-type').split(';')[0] ?? '').trim().toLowerCase(), length, chunks: chunks() };
}
