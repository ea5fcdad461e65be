import { parse as parseYaml, YAMLParseError } from 'yaml';
import { encodeBody, UNREPLAYED_HEADERS, type BodyMatcher, type RecordedBody, type RecordedHeaders } from './domain/index.js';
import { AppError } from './errors.js';

/**
 * Helpers for importer plugins (built-in and external alike): locations, bounded document
 * parsing, headers and bodies in the library's shapes. Exported through kernel/public.ts.
 */

/** Deepest nesting a document may have; deeper is refused (422), so no walker can blow the stack. @public */
export const MAX_NESTING = 100;

/** A plain JSON object (not an array, not null), as documents are walked. @public */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A 422 `validation_error` whose detail starts with the location: `log.entries[17].response.status: …`. @public */
export function invalid(where: string, why: string): AppError {
  return new AppError('validation_error', `${where}: ${why}`);
}

const IDENT = /^[A-Za-z_$][\w$-]*$/;

/** Extends a location: `at('log', 'entries', 17)` → `log.entries[17]`; odd keys are quoted: `paths["/pets"]`. @public */
export function at(base: string, ...keys: readonly (string | number)[]): string {
  let out = base;
  for (const k of keys) {
    if (typeof k === 'number') out += `[${k}]`;
    else if (IDENT.test(k)) out += out ? `.${k}` : k;
    else out += `[${JSON.stringify(k)}]`;
  }
  return out;
}

/** True for YAML media types (`application/yaml`, `text/x-yaml`, …). @public */
export function isYamlType(mediaType: string): boolean {
  return /^(application|text)\/(x-)?yaml$/.test(mediaType);
}

/** JSON and YAML media types, for importers whose documents come as either. @public */
export const JSON_OR_YAML: readonly string[] = ['application/json', '+json', 'application/yaml', 'application/x-yaml', 'text/yaml', 'text/x-yaml'];

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Largest document read whole (as OpenAPI and Postman documents are: a `$ref` or a variable may
 * point anywhere in them). Parsing takes several times the text in memory, so this is well
 * below the 100 MiB a streamed format (HAR) may send. Real descriptions are far smaller
 * (GitHub's REST description, among the largest, is 12 MB).
 * @public
 */
export const MAX_WHOLE_DOCUMENT = 32 * 1024 * 1024;

/** Concatenates a byte stream and decodes it as UTF-8: 413 past `maxBytes`, 422 when not UTF-8. @public */
export async function readText(source: AsyncIterable<Uint8Array>, maxBytes: number = MAX_WHOLE_DOCUMENT): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of source) {
    size += chunk.byteLength;
    if (size > maxBytes) throw new AppError('payload_too_large', `document: larger than ${maxBytes / 2 ** 20} MiB; documents read whole (OpenAPI, Postman) are limited to that`);
    chunks.push(chunk);
  }
  try {
    return utf8.decode(Buffer.concat(chunks));
  } catch {
    throw invalid('document', 'is not UTF-8 text');
  }
}

function lineAndColumn(text: string, position: number): string {
  const before = text.slice(0, position);
  const line = before.split('\n').length;
  return `line ${line}, column ${position - before.lastIndexOf('\n')}`;
}

/**
 * Reads a whole JSON or YAML document (YAML when the media type says so), refusing malformed
 * text and nesting deeper than {@link MAX_NESTING} with a 422 that names where. YAML aliases are
 * capped, so a "billion laughs" document cannot expand without bound.
 * @public
 */
export async function readDocument(source: AsyncIterable<Uint8Array>, mediaType: string): Promise<unknown> {
  const text = await readText(source);
  if (!text.trim()) throw invalid('document', 'is empty');
  let value: unknown;
  if (isYamlType(mediaType)) {
    try {
      value = parseYaml(text, { maxAliasCount: 100, uniqueKeys: false });
    } catch (err) {
      if (err instanceof YAMLParseError) {
        const pos = err.linePos?.[0];
        throw invalid('document', `malformed YAML${pos ? ` at line ${pos.line}, column ${pos.col}` : ''} (${err.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')})`);
      }
      throw invalid('document', `malformed YAML (${(err as Error).message.split('\n')[0]})`);
    }
  } else {
    try {
      value = JSON.parse(text);
    } catch (err) {
      const message = (err as Error).message;
      const position = /position (\d+)/.exec(message);
      const at = position ? Number(position[1]) : text.length;
      const where = at >= text.trimEnd().length ? ' at its end (truncated?)' : ` at ${lineAndColumn(text, at)}`;
      throw invalid('document', `malformed JSON${where} (${message})`);
    }
  }
  checkNesting(value, MAX_NESTING);
  return value;
}

/** Throws a 422 naming the first place where `value` nests deeper than `max`. Iterative: never recurses. @public */
export function checkNesting(value: unknown, max: number = MAX_NESTING): void {
  const stack: { v: unknown; depth: number; where: string }[] = [{ v: value, depth: 0, where: '' }];
  while (stack.length) {
    const { v, depth, where } = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth >= max) {
      const path = where.startsWith('[') ? `document${where}` : where || 'document';
      throw invalid(path.length > 80 ? `${path.slice(0, 80)}…` : path, `nests deeper than ${max} levels`);
    }
    if (Array.isArray(v)) v.forEach((x, i) => stack.push({ v: x, depth: depth + 1, where: at(where, i) }));
    else for (const [k, x] of Object.entries(v)) stack.push({ v: x, depth: depth + 1, where: at(where, k) });
  }
}

/** Response headers a mock never replays as recorded: framing, and encodings of a body documents keep decoded. */
const DROPPED_HEADERS: ReadonlySet<string> = new Set([...UNREPLAYED_HEADERS, 'content-encoding']);

/**
 * Headers in the library's shape: lower-case names, a repeated header as an array of its values,
 * without framing and content-encoding (documents keep bodies decoded) or HTTP/2 pseudo-headers.
 * @public
 */
export function recordedHeaders(pairs: Iterable<readonly [string, string]>): RecordedHeaders {
  const out: RecordedHeaders = {};
  for (const [rawName, value] of pairs) {
    const name = rawName.trim().toLowerCase();
    if (!name || name.startsWith(':') || DROPPED_HEADERS.has(name)) continue;
    const prev = out[name];
    out[name] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
  }
  return out;
}

/** A body given as base64 (`{b64, size_bytes}` unless it is UTF-8 text). @public */
export function bodyFromBase64(b64: string): RecordedBody {
  return encodeBody(Buffer.from(b64, 'base64'));
}

/** A request body as a matcher: JSON when it parses as JSON, else the exact text; null when empty. @public */
export function bodyMatcherFor(text: string | null | undefined, mediaType = ''): BodyMatcher | null {
  if (!text) return null;
  if (/json/i.test(mediaType) || /^\s*[[{]/.test(text)) {
    try {
      return { json: JSON.parse(text) as unknown };
    } catch {
      // not JSON after all: match the text
    }
  }
  return { equals: text };
}

/** Query parameters of a URL search string as a matcher; null when there are none. @public */
export function queryOf(search: string | URLSearchParams): Record<string, string[]> | null {
  const params = typeof search === 'string' ? new URLSearchParams(search) : search;
  const out: Record<string, string[]> = {};
  for (const [k, v] of params) (out[k] ??= []).push(v);
  return Object.keys(out).length ? out : null;
}

/**
 * A concrete path from a template: each `{name}` is replaced by `value(name)`, percent-encoded.
 * `fillTemplate('/pets/{id}', () => '7')` → `/pets/7`.
 * @public
 */
export function fillTemplate(template: string, value: (name: string) => string): string {
  return template.replace(/\{([^{}/]+)\}/g, (_, name: string) => encodeURIComponent(value(name)));
}

/** A status code as the library takes it: a whole number 100–599. @public */
export function isStatus(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 100 && value <= 599;
}
