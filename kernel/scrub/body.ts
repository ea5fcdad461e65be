import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { encodeBody, headerValue, type RecordedBody, type RecordedHeaders } from '../domain/index.js';

/** Most bytes a compressed body is inflated to for scrubbing: tenant config `record_max_body_bytes`' default (20 MiB). @public */
export const MAX_INFLATED_BYTES = 20 * 1024 * 1024;
/** A compressed body may inflate to at most this many times its own size (and to 1 MiB whatever its size). */
const MAX_INFLATE_RATIO = 100;
const MIN_INFLATE_LIMIT = 1024 * 1024;

type Inflate = (bytes: Buffer, options: { maxOutputLength: number }) => Buffer;
const INFLATE: Record<string, Inflate> = { gzip: gunzipSync, 'x-gzip': gunzipSync, deflate: inflateSync, br: brotliDecompressSync };

/** How many bytes a compressed body of `size` bytes may inflate to. @public */
export function inflateLimit(size: number): number {
  return Math.min(MAX_INFLATED_BYTES, Math.max(MIN_INFLATE_LIMIT, size * MAX_INFLATE_RATIO));
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Content types read as text when their bytes are not UTF-8. */
function isTextualType(type: string): boolean {
  const mime = type.split(';')[0]!.trim().toLowerCase();
  return mime.startsWith('text/') || /json|xml|javascript|ecmascript/.test(mime) || mime === 'application/x-www-form-urlencoded';
}

// WHATWG windows-1252, bytes 0x80-0x9F; the five it leaves undefined stand for themselves.
const CP1252_HIGH = '\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178';
const CP1252_BYTE = new Map([...CP1252_HIGH].map((c, i) => [c, 0x80 + i]));

/** Bytes as windows-1252 text: one character a byte, so every byte sequence has a text. @public */
export function decodeWindows1252(bytes: Uint8Array): string {
  const latin1 = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  return /[\x80-\x9f]/.test(latin1) ? latin1.replace(/[\x80-\x9f]/g, (c) => CP1252_HIGH[c.charCodeAt(0) - 0x80]!) : latin1;
}

/** Text back to windows-1252 bytes; a character it cannot spell becomes `?`. The inverse of {@link decodeWindows1252}. @public */
export function encodeWindows1252(text: string): Buffer {
  const out = Buffer.allocUnsafe(text.length);
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    out[i] = code < 0x80 || (code >= 0xa0 && code <= 0xff) ? code : (CP1252_BYTE.get(text[i]!) ?? 0x3f);
  }
  return out;
}

/** A body as scrubbers read it: text, the headers to keep with it, and how to keep a (scrubbed) text. @public */
export interface ReadableBody {
  /** The headers to keep: without `content-encoding` and `content-length` once a body was decompressed. */
  headers: RecordedHeaders;
  text: string;
  /** The body to keep for `text` as scrubbers left it: the same encoding as it came in (decompressed). */
  encode(text: string): RecordedBody;
}

/**
 * A recorded body as text scrubbers can read, or null when it cannot be read: compressed with a
 * coding we do not know, corrupt, or inflating past {@link inflateLimit}; or bytes that are not
 * UTF-8 under a content type that is not textual (images, octet-stream, protobuf). Bytes that are
 * not UTF-8 under a textual type are read as windows-1252 and written back the same way. A
 * compressed body is kept decompressed.
 * @public
 */
export function readableBody(headers: RecordedHeaders, body: RecordedBody): ReadableBody | null {
  if (typeof body === 'string') return { headers, text: body, encode: (text) => text };
  let bytes: Buffer = Buffer.from(body.b64, 'base64');
  let kept = headers;
  const codings = headerValue(headers, 'content-encoding').toLowerCase().split(',').map((c) => c.trim()).filter((c) => c && c !== 'identity');
  if (codings.length) {
    // Codings are listed in the order they were applied: undo the last first.
    for (const coding of codings.reverse()) {
      const inflate = INFLATE[coding];
      if (!inflate) return null;
      try {
        bytes = inflate(bytes, { maxOutputLength: inflateLimit(bytes.length) });
      } catch {
        return null;
      }
    }
    const { 'content-encoding': _e, 'content-length': _l, ...rest } = headers;
    kept = rest;
  }
  const unchanged = (text: string, original: string, encode: (t: string) => RecordedBody) => (text === original && !codings.length ? body : encode(text));
  try {
    const text = strictUtf8.decode(bytes);
    return { headers: kept, text, encode: (t) => unchanged(t, text, (s) => s) };
  } catch {
    if (!isTextualType(headerValue(headers, 'content-type'))) return null;
    const text = decodeWindows1252(bytes);
    return { headers: kept, text, encode: (t) => unchanged(t, text, (s) => encodeBody(encodeWindows1252(s))) };
  }
}
