import { headerValue, type ExchangeRecord } from '../../../kernel/public.js';

/** Most key paths kept of one body: enough to tell one resource from another, cheap to compare. */
const MAX_KEYS = 256;
/** Array items looked into: a list's first few show what it lists. */
const ITEMS = 3;

const fields = (value: unknown, prefix: string, out: Set<string>) => {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return;
  for (const k in value) if (out.size < MAX_KEYS) out.add(prefix + k);
};

/**
 * The field names of a JSON value, a list's through its first items (`id`, `[].id`): what a
 * response is made of, not what it says. Only the top level: the fields of embedded objects
 * would weigh an optional embedded object, there or not, as many fields. An empty object or
 * array, or a scalar, is its type.
 */
export function keyPaths(value: unknown): string[] {
  const out = new Set<string>();
  if (Array.isArray(value)) for (const item of value.slice(0, ITEMS)) fields(item, '[].', out);
  else fields(value, '', out);
  if (!out.size) out.add(Array.isArray(value) ? '[]' : value === null ? 'null' : typeof value);
  return [...out];
}

/** The key paths of a record's JSON response body; null when it has none (no body, not JSON). */
export function responseKeys(record: ExchangeRecord): string[] | null {
  const body = record.response?.body;
  if (typeof body !== 'string' || !body) return null;
  if (!/^\s*[[{]/.test(body) && !/[/+]json\b/i.test(headerValue(record.response!.headers, 'content-type'))) return null;
  try {
    return keyPaths(JSON.parse(body));
  } catch {
    return null;
  }
}
