import { invalid, isObject } from '../../../kernel/public.js';

/** A variable lookup: inner scopes (item, folder) before outer ones (collection). */
export type Variables = (name: string) => string | undefined;

/** A Postman URL resolved against its variables. */
export interface ResolvedUrl {
  /** Path with `:name` and unresolved `{{name}}` segments as `{name}`. */
  template: string;
  /** Sample values of the template's parameters, from the URL's own path variables. */
  samples: Record<string, string>;
  query: Record<string, string[]> | null;
  host: string | null;
  /** Variables that had no value. */
  unresolved: string[];
}

type Obj = Record<string, unknown>;
const VAR_RE = /\{\{([^{}]+)\}\}/g;
/** `<long>`, `<string>`: placeholders Postman's OpenAPI converter writes where it has no value. */
const PLACEHOLDER_RE = /^<[^<>]*>$/;

/** Longest text a URL part may grow to once its variables are put in. */
const MAX_EXPANDED = 64 * 1024;

function substitute(text: string, vars: Variables, where: string): string {
  // Values may name other variables; three rounds cover real collections without looping
  // forever. Values that name many others grow geometrically, so the size is checked as each
  // one goes in, before the text is built.
  for (let round = 0; round < 3 && text.includes('{{'); round++) {
    let size = text.length;
    text = text.replace(VAR_RE, (whole, name: string) => {
      const value = vars(name.trim());
      if (value === undefined) return whole;
      size += value.length - whole.length;
      if (size > MAX_EXPANDED) throw invalid(where, `its variables expand past ${MAX_EXPANDED / 1024} KiB (at {{${name.trim().slice(0, 40)}}}); a variable may not grow a URL that large`);
      return value;
    });
  }
  return text;
}

const joined = (part: unknown, sep: string) => (Array.isArray(part) ? part.map(String).join(sep) : typeof part === 'string' ? part : '');

/** The URL as one string: v2.1 objects may have parts only, v2.0 often only `raw` or a plain string. */
function rawOf(url: unknown, where: string): string {
  if (typeof url === 'string') return url;
  if (!isObject(url)) throw invalid(where, 'must be a URL string or object');
  if (url.host === undefined && url.path === undefined) {
    if (typeof url.raw === 'string') return url.raw;
    throw invalid(where, 'has no raw, host or path');
  }
  const protocol = typeof url.protocol === 'string' ? `${url.protocol}://` : '';
  const port = url.port !== undefined && url.port !== '' ? `:${String(url.port)}` : '';
  const path = joined(url.path, '/');
  return `${protocol}${joined(url.host, '.')}${port}${path && !path.startsWith('/') ? '/' : ''}${path}`;
}

function queryPairs(url: unknown, search: string): [string, string][] {
  if (isObject(url) && Array.isArray(url.query)) {
    return url.query.filter((q): q is Obj => isObject(q) && typeof q.key === 'string' && q.disabled !== true).map((q) => [q.key as string, q.value === null || q.value === undefined ? '' : String(q.value)]);
  }
  return [...new URLSearchParams(search)];
}

/** Resolves a Postman request URL (string or object) into a path template, samples, query and host. */
export function resolveUrl(url: unknown, vars: Variables, where: string): ResolvedUrl {
  const own = new Map<string, string>();
  if (isObject(url) && Array.isArray(url.variable)) {
    for (const v of url.variable) if (isObject(v) && typeof v.key === 'string' && v.value !== undefined && v.value !== null && !PLACEHOLDER_RE.test(String(v.value))) own.set(v.key, String(v.value));
  }
  const unresolved = new Set<string>();
  let text = substitute(rawOf(url, where), vars, where).replace(/#.*$/, '');
  const q = text.indexOf('?');
  const search = q === -1 ? '' : text.slice(q + 1);
  if (q !== -1) text = text.slice(0, q);
  let host: string | null = null;
  const authority = /^(?:[a-z][a-z0-9+.-]*:)?\/\/([^/]*)/i.exec(text);
  if (authority) {
    host = authority[1]!.replace(/^.*@/, '').toLowerCase() || null;
    text = text.slice(authority[0].length);
  } else if (!text.startsWith('/')) {
    // No scheme: the first segment is the host (`api.example.com/pets`, or a `{{baseUrl}}` with no value).
    const slash = text.indexOf('/');
    const first = slash === -1 ? text : text.slice(0, slash);
    for (const m of first.matchAll(VAR_RE)) unresolved.add(m[1]!.trim());
    if (!first.includes('{{')) host = first.toLowerCase() || null;
    text = slash === -1 ? '' : text.slice(slash);
  }
  if (host?.includes('{{')) host = null;
  const samples: Record<string, string> = {};
  const segments = text.split('/').slice(1).map((segment) => {
    const param = /^:([A-Za-z0-9_.-]+)$/.exec(segment) ?? /^\{\{([^{}]+)\}\}$/.exec(segment);
    if (!param) return segment;
    const name = param[1]!.trim();
    if (segment.startsWith('{{')) unresolved.add(name);
    const sample = own.get(name);
    if (sample !== undefined) samples[name] = sample;
    return `{${name}}`;
  });
  const query: Record<string, string[]> = {};
  for (const [key, rawValue] of queryPairs(url, search)) {
    const value = substitute(rawValue, vars, where);
    for (const m of value.matchAll(VAR_RE)) unresolved.add(m[1]!.trim());
    // A value still holding a variable or a placeholder would never match a real request.
    if (value.includes('{{') || PLACEHOLDER_RE.test(value)) continue;
    (query[substitute(key, vars, where)] ??= []).push(value);
  }
  return { template: `/${segments.join('/')}`, samples, query: Object.keys(query).length ? query : null, host, unresolved: [...unresolved] };
}
