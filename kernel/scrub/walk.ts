import { headerValue, type RecordedBody, type RecordedHeaders, type TrafficRecord } from '../domain/index.js';
import type { ScrubContext, ScrubFinding } from '../contracts/scrubber.js';
import { MAX_NESTING } from '../import-kit.js';
import { readableBody } from './body.js';

/**
 * The rule of the finding a walk adds for a body it could not read: compressed past its bound or
 * with an unknown coding, bytes under a content type that is not text, or JSON nested deeper
 * than MAX_NESTING (scrubbed as plain text, so rules that go by keys did not apply). Its path
 * is `request.body` or `response.body`; a body that carries it was not (wholly) scrubbed.
 * @public
 */
export const UNSCRUBBABLE = 'unscrubbable_body';

/** Where a value sits in a traffic record. @public */
export interface ScrubSite {
  readonly side: 'request' | 'response';
  /** `form`: a field of an application/x-www-form-urlencoded body; `body`: a JSON leaf or key, or a whole text body. */
  readonly part: 'path' | 'query' | 'header' | 'body' | 'form';
  /**
   * The JSON key, header name or query parameter the value sits under, lower-case; null for a
   * path segment, a text body, or a name itself.
   */
  readonly key: string | null;
  /**
   * True when the string is a JSON key or a query or form parameter's name, not a value; a
   * replacement renames it (`key` is then null: a name sits under no key).
   */
  readonly isName: boolean;
  /** Where, for findings: `request.query.email`, `response.body.data[0].email`, `request.path[2]`. */
  readonly path: string;
  /** In a JSON body, the object the value is a field of (its siblings tell what it is); else null (and for a name). */
  readonly parent: Readonly<Record<string, unknown>> | null;
}

/**
 * Looks at one string value and returns it, replaced where a rule fires; calls `found(rule)`
 * once per rule that fired. Never sees the values of keys the tenant marked `keep`.
 * @public
 */
export type ScrubVisitor = (value: string, site: ScrubSite, found: (rule: string) => void) => string;

/** A site whose path is spelled out only when a finding needs it (most values have none). */
class Site implements ScrubSite {
  constructor(
    readonly side: 'request' | 'response',
    readonly part: ScrubSite['part'],
    readonly key: string | null,
    readonly parent: Readonly<Record<string, unknown>> | null,
    private readonly at: Site | string,
    private readonly step: string,
  ) {}

  get isName(): boolean {
    return false;
  }

  get path(): string {
    return (typeof this.at === 'string' ? this.at : this.at.path) + this.step;
  }
}

/**
 * The site of a name: no key and no parent, so a visitor's answer depends on the side, the part
 * and the name alone (and can be remembered, see `namesSeen`). Its findings get their path once
 * the new name is known.
 */
class NameSite extends Site {
  constructor(side: 'request' | 'response', part: ScrubSite['part'], at: Site | string) {
    super(side, part, null, null, at, '');
  }

  override get isName(): boolean {
    return true;
  }
}

/**
 * What each visitor made of each name it saw, by side, part and name: the same few keys come in
 * every record, and a visitor is deterministic. Kept per visitor (a chain's combined visitor
 * lives for one batch), at most NAMES_KEPT names.
 */
const namesSeen = new WeakMap<ScrubVisitor, Map<string, Map<string, { name: string; rules: string[] }>>>();
const NAMES_KEPT = 10_000;
const RESPONSE_PART = { body: 'response body', query: 'response query', form: 'response form' } as const;

/** Thrown (and caught) when a JSON body nests deeper than MAX_NESTING. */
const TOO_DEEP = new Error('too deep');

/**
 * Parsed JSON bodies by the request or response object that holds them: the walker never
 * changes a parsed value (it copies on write), so the next scrubber of a chain, handed this
 * walker's output, reuses the parse instead of parsing the same text again.
 */
const parsedBodies = new WeakMap<object, { text: string; value: unknown }>();

const isJsonType = (type: string) => /[/+]json\b/i.test(type);
const isFormType = (type: string) => /^application\/x-www-form-urlencoded\b/i.test(type);

function encodeSegment(value: string): string {
  return encodeURIComponent(value).replace(/%40/g, '@').replace(/%3A/gi, ':').replace(/%2C/gi, ',');
}

function safeDecode(text: string, plusIsSpace: boolean): string {
  const spaced = plusIsSpace && text.includes('+') ? text.replace(/\+/g, ' ') : text;
  if (!spaced.includes('%')) return spaced;
  try {
    return decodeURIComponent(spaced);
  } catch {
    return spaced;
  }
}

/**
 * An object with some keys renamed, in the same order. A key kept as it was keeps its name; a
 * new name already taken gets `~2`, `~3` … (the first free one, in key order).
 */
function renamed(obj: Readonly<Record<string, unknown>>, keys: readonly string[], names: string[]): Record<string, unknown> {
  const taken = new Set(keys.filter((k, i) => names[i] === k));
  for (let i = 0; i < keys.length; i++) {
    if (names[i] === keys[i]) continue;
    let name = names[i]!;
    for (let n = 2; taken.has(name); n++) name = `${names[i]}~${n}`;
    taken.add(name);
    names[i] = name;
  }
  return Object.fromEntries(keys.map((k, i) => [names[i]!, obj[k]]));
}

/**
 * Walks every string a scrubber should see in a traffic record (path segments, query names and
 * values, header values, JSON bodies key by key and leaf by leaf, whole numbers in them, form
 * fields, text bodies) and returns the record with the visitor's replacements and the findings
 * (where and which rule, never the value). Parts with no replacement keep their exact text; a
 * changed JSON body is re-serialised; a renamed key keeps its place. A body it cannot read is
 * left as it was and flagged with an {@link UNSCRUBBABLE} finding. Never throws for any record.
 * @public
 */
export function walkRecord<T extends TrafficRecord>(record: T, ctx: ScrubContext, visit: ScrubVisitor): { record: T; findings: ScrubFinding[] } {
  const findings: ScrubFinding[] = [];
  const keep = new Set<string>();
  for (const key in ctx.rules.keys) if (ctx.rules.keys[key] === 'keep') keep.add(key);
  const see = (value: string, site: Site): string => (site.key !== null && keep.has(site.key) ? value : visit(value, site, (rule) => findings.push({ path: site.path, rule })));
  let seenNames = namesSeen.get(visit);
  if (!seenNames) namesSeen.set(visit, (seenNames = new Map()));
  const nameMemo = seenNames;
  /** A name's new spelling and the rules that fired on it (their findings are added with the final name). */
  const seeName = (name: string, side: 'request' | 'response', part: 'body' | 'query' | 'form', at: Site | string): { name: string; rules: string[] } => {
    // By side, then part, then name: no key string is built for the lookup.
    const where = side === 'request' ? part : RESPONSE_PART[part];
    let byName = nameMemo.get(where);
    if (!byName) nameMemo.set(where, (byName = new Map()));
    let seen = byName.get(name);
    if (!seen) {
      const rules: string[] = [];
      seen = { name: visit(name, new NameSite(side, part, at), (rule) => rules.push(rule)), rules };
      if (byName.size >= NAMES_KEPT) byName.clear();
      byName.set(name, seen);
    }
    return seen;
  };

  const headersOf = (side: 'request' | 'response', headers: RecordedHeaders): RecordedHeaders => {
    let out: RecordedHeaders | null = null;
    const at = `${side}.headers.`;
    for (const name in headers) {
      const value = headers[name]!;
      const key = name.toLowerCase();
      const site = new Site(side, 'header', key, null, at, key);
      const next = Array.isArray(value) ? value.map((v) => see(v, site)) : see(value, site);
      if (Array.isArray(value) ? (next as string[]).some((v, i) => v !== value[i]) : next !== value) (out ??= { ...headers })[name] = next;
    }
    return out ?? headers;
  };

  const pairs = (side: 'request' | 'response', text: string, at: string, part: 'query' | 'form'): string => {
    let changed = false;
    const out = text.split('&').map((pair) => {
      const eq = pair.indexOf('=');
      const rawName = eq === -1 ? pair : pair.slice(0, eq);
      const name = safeDecode(rawName, true);
      const key = name.toLowerCase();
      if (keep.has(key)) return pair;
      let newName = name;
      if (name) {
        const seen = seeName(name, side, part, at);
        newName = seen.name;
        for (const rule of seen.rules) findings.push({ path: `${at}.${newName}`, rule });
      }
      const nameText = newName === name ? rawName : encodeURIComponent(newName);
      if (eq === -1) {
        if (newName !== name) changed = true;
        return nameText;
      }
      const value = safeDecode(pair.slice(eq + 1), true);
      const next = see(value, new Site(side, part, key, null, at, `.${newName}`));
      if (next === value && newName === name) return pair;
      changed = true;
      return `${nameText}=${next === value ? pair.slice(eq + 1) : encodeURIComponent(next)}`;
    });
    return changed ? out.join('&') : text;
  };

  const json = (side: 'request' | 'response', value: unknown, key: string | null, at: Site | string, step: string, parent: Record<string, unknown> | null, depth: number): unknown => {
    if (typeof value === 'string') return see(value, new Site(side, 'body', key, parent, at, step));
    // Whole numbers can be PII too (a phone or national id sent as a number); they stay numbers.
    if (typeof value === 'number') {
      if (!Number.isSafeInteger(value)) return value;
      const text = String(value);
      const next = see(text, new Site(side, 'body', key, parent, at, step));
      return next === text ? value : /^-?\d+$/.test(next) && Number.isSafeInteger(Number(next)) ? Number(next) : next;
    }
    if (value === null || typeof value !== 'object') return value;
    if (depth >= MAX_NESTING) throw TOO_DEEP;
    const here = new Site(side, 'body', key, parent, at, step);
    if (Array.isArray(value)) {
      let out: unknown[] | null = null;
      for (let i = 0; i < value.length; i++) {
        const next = json(side, value[i], key, here, `[${i}]`, parent, depth + 1);
        if (next !== value[i]) (out ??= [...value])[i] = next;
      }
      return out ?? value;
    }
    const obj = value as Record<string, unknown>;
    // Names first, so the findings under a renamed key name it as it will be. Keys are walked
    // in place (for…in is Object.keys' order): the array is made only when one is renamed.
    let keys: string[] | null = null;
    let names: string[] | null = null;
    let nameRules: { i: number; rules: string[] }[] | null = null;
    let i = 0;
    for (const k in obj) {
      if (!(keep.size && keep.has(k.toLowerCase()))) {
        const seen = seeName(k, side, 'body', here);
        if (seen.name !== k) (names ??= (keys ??= Object.keys(obj)).slice())[i] = seen.name;
        if (seen.rules.length) (nameRules ??= []).push({ i, rules: seen.rules });
      }
      i++;
    }
    let out: Record<string, unknown> | null = names ? renamed(obj, (keys ??= Object.keys(obj)), names) : null;
    if (nameRules) for (const { i: at, rules } of nameRules) for (const rule of rules) findings.push({ path: `${here.path}.${names?.[at] ?? (keys ??= Object.keys(obj))[at]}`, rule });
    i = 0;
    for (const k in obj) {
      const name = names?.[i++] ?? k;
      const lower = k.toLowerCase();
      if (keep.has(lower)) continue;
      const next = json(side, obj[k], lower, here, `.${name}`, obj, depth + 1);
      if (next !== obj[k]) (out ??= { ...obj })[name] = next;
    }
    return out ?? value;
  };

  /** A body's new text, and its parsed value when it is JSON (for the next walker's cache). */
  const bodyOf = (side: 'request' | 'response', holder: object, headers: RecordedHeaders, body: string): { body: string; parsed?: unknown } => {
    if (body === '') return { body };
    const type = headerValue(headers, 'content-type');
    const at = `${side}.body`;
    const asText = () => see(body, new Site(side, 'body', null, null, at, ''));
    if (isFormType(type)) return { body: pairs(side, body, at, 'form') };
    const cached = parsedBodies.get(holder);
    let parsed: unknown = cached?.text === body ? cached.value : undefined;
    if (parsed === undefined) {
      const first = body.trimStart()[0];
      if (!isJsonType(type) && first !== '{' && first !== '[') return { body: asText() };
      try {
        parsed = JSON.parse(body);
      } catch {
        return { body: asText() };
      }
    }
    const mark = findings.length;
    try {
      const next = json(side, parsed, null, at, '', null, 0);
      return next === parsed ? { body, parsed } : { body: JSON.stringify(next), parsed: next };
    } catch (err) {
      // Deeper than any walk (or JSON.stringify) may go: scrubbed by shape as plain text, and flagged.
      if (err !== TOO_DEEP && !(err instanceof RangeError)) throw err;
      findings.length = mark;
      const text = asText();
      findings.push({ path: at, rule: UNSCRUBBABLE });
      return { body: text };
    }
  };

  const uriOf = (uri: string): string => {
    const q = uri.indexOf('?');
    const path = q === -1 ? uri : uri.slice(0, q);
    let changed = false;
    const segments = path.split('/').map((segment, i) => {
      if (!segment) return segment;
      const value = safeDecode(segment, false);
      const next = see(value, new Site('request', 'path', null, null, 'request.path', `[${i}]`));
      if (next === value) return segment;
      changed = true;
      return encodeSegment(next);
    });
    const query = q === -1 ? '' : uri.slice(q + 1);
    const nextQuery = query ? pairs('request', query, 'request.query', 'query') : query;
    if (!changed && nextQuery === query) return uri;
    return (changed ? segments.join('/') : path) + (q === -1 ? '' : `?${nextQuery}`);
  };

  const side = <P extends TrafficRecord['request'] | NonNullable<TrafficRecord['response']>>(name: 'request' | 'response', part: P, patch: Partial<P>): P => {
    const readable = readableBody(part.headers, part.body);
    if (!readable) {
      findings.push({ path: `${name}.body`, rule: UNSCRUBBABLE });
      return { ...part, ...patch, headers: headersOf(name, part.headers) };
    }
    const { body, parsed } = bodyOf(name, part, readable.headers, readable.text);
    const kept: RecordedBody = readable.encode(body);
    const out = { ...part, ...patch, headers: headersOf(name, readable.headers), body: kept };
    if (parsed !== undefined && typeof kept === 'string') parsedBodies.set(out, { text: kept, value: parsed });
    return out;
  };
  const request = side('request', record.request, { uri: uriOf(record.request.uri) });
  const response = record.response ? side('response', record.response, {}) : record.response;
  return { record: { ...record, request, response }, findings };
}
