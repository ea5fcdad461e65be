import type { JsonSchema } from '../../../kernel/public.js';

const FORMATS: [string, RegExp][] = [
  ['date-time', /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/],
  ['date', /^\d{4}-\d{2}-\d{2}$/],
  ['uuid', /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i],
  ['email', /^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$/],
  ['uri', /^[a-z][a-z0-9+.-]*:\/\/\S+$/i],
];

/** The schema of one JSON value: types, object properties (all required), array items, string formats. */
export function inferSchema(value: unknown): JsonSchema {
  if (value === null) return { type: 'null' };
  if (typeof value === 'boolean') return { type: 'boolean' };
  if (typeof value === 'number') return { type: Number.isInteger(value) ? 'integer' : 'number' };
  if (typeof value === 'string') {
    const format = FORMATS.find(([, re]) => re.test(value))?.[0];
    return format ? { type: 'string', format } : { type: 'string' };
  }
  if (Array.isArray(value)) {
    let items: JsonSchema | null = null;
    for (const item of value) items = items ? mergeSchemas(items, inferSchema(item)) : inferSchema(item);
    return items ? { type: 'array', items } : { type: 'array' };
  }
  const properties: Record<string, JsonSchema> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) properties[k] = inferSchema(v);
  return { type: 'object', properties, required: Object.keys(properties).sort() };
}

/** The single-type schemas a schema stands for (an `anyOf` is flattened). */
const variants = (s: JsonSchema): JsonSchema[] => (Array.isArray(s.anyOf) ? (s.anyOf as JsonSchema[]) : [s]);
/** integer and number merge into number. */
const kind = (s: JsonSchema) => (s.type === 'integer' ? 'number' : String(s.type));

function mergeSame(a: JsonSchema, b: JsonSchema): JsonSchema {
  switch (a.type) {
    case 'object': {
      const pa = (a.properties ?? {}) as Record<string, JsonSchema>;
      const pb = (b.properties ?? {}) as Record<string, JsonSchema>;
      const properties: Record<string, JsonSchema> = {};
      for (const k of new Set([...Object.keys(pa), ...Object.keys(pb)])) properties[k] = pa[k] && pb[k] ? mergeSchemas(pa[k], pb[k]) : (pa[k] ?? pb[k])!;
      const inB = new Set((b.required ?? []) as string[]);
      return { type: 'object', properties, required: ((a.required ?? []) as string[]).filter((k) => inB.has(k)) };
    }
    case 'array':
      if (!a.items || !b.items) return a.items ? a : b;
      return { type: 'array', items: mergeSchemas(a.items as JsonSchema, b.items as JsonSchema) };
    case 'string':
      return a.format && a.format === b.format ? a : { type: 'string' };
    default:
      return a.type === b.type ? a : { type: 'number' };
  }
}

/**
 * The schema both values fit: object properties merged (required = required in both), items
 * merged, formats kept only when both agree, different types as an `anyOf` in a fixed order.
 */
export function mergeSchemas(a: JsonSchema, b: JsonSchema): JsonSchema {
  const byKind = new Map<string, JsonSchema>();
  for (const s of [...variants(a), ...variants(b)]) {
    const k = kind(s);
    const seen = byKind.get(k);
    byKind.set(k, seen ? mergeSame(seen, s) : s);
  }
  const all = [...byKind.entries()].sort(([x], [y]) => (x < y ? -1 : 1)).map(([, s]) => s);
  return all.length === 1 ? all[0]! : { anyOf: all };
}
