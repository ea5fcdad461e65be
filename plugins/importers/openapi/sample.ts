import { isObject } from '../../../kernel/public.js';
import type { Refs } from './refs.js';

type Obj = Record<string, unknown>;

/** How much a document may generate: nodes per sample and in all, so a hostile document stays cheap. */
export interface SampleBudget {
  perSample: number;
  total: number;
  truncated: boolean;
}

const MAX_DEPTH = 12;
const FORMATS: Record<string, unknown> = {
  'date-time': '2024-01-01T00:00:00Z',
  date: '2024-01-01',
  time: '00:00:00Z',
  email: 'user@example.com',
  uuid: '3fa85f64-5717-4562-b3fc-2c963f66afa6',
  uri: 'https://example.com',
  url: 'https://example.com',
  hostname: 'example.com',
  ipv4: '192.0.2.1',
  ipv6: '2001:db8::1',
  byte: 'c3RyaW5n',
  binary: '',
  password: '********',
};

function firstType(schema: Obj): string | undefined {
  const t = schema.type;
  if (Array.isArray(t)) return t.find((x) => x !== 'null') as string | undefined;
  if (typeof t === 'string') return t;
  if (isObject(schema.properties) || schema.additionalProperties !== undefined) return 'object';
  if (schema.items !== undefined) return 'array';
  return undefined;
}

/**
 * A deterministic sample of a JSON Schema (OpenAPI 3.0 or 3.1): the schema's own example, const,
 * default or first enum value when it has one, else one built from its type (every property, one
 * array item, a value by string format). Recursive schemas stop where they recur; depth and node
 * counts are bounded, and `budget.truncated` says when a bound cut the sample short.
 */
export function sampleOf(schema: unknown, refs: Refs, where: string, budget: SampleBudget, depth = 0, seen: readonly string[] = []): unknown {
  if (budget.perSample <= 0 || budget.total <= 0 || depth > MAX_DEPTH) {
    budget.truncated = true;
    return undefined;
  }
  budget.perSample--;
  budget.total--;
  let node = schema;
  if (isObject(node) && typeof node.$ref === 'string') {
    if (seen.includes(node.$ref)) return undefined; // a recursive schema: stop where it recurs
    const resolved = refs.resolve(node, where);
    if ('external' in resolved) return undefined;
    if (resolved.ref) seen = [...seen, resolved.ref];
    node = resolved.node;
  }
  if (!isObject(node)) return node === true ? {} : undefined;
  if (node.example !== undefined) return node.example;
  if (Array.isArray(node.examples) && node.examples.length) return node.examples[0];
  if (node.const !== undefined) return node.const;
  if (node.default !== undefined) return node.default;
  if (Array.isArray(node.enum) && node.enum.length) return node.enum[0];
  const next = (s: unknown, w: string) => sampleOf(s, refs, w, budget, depth + 1, seen);
  if (Array.isArray(node.allOf)) {
    let merged: unknown;
    node.allOf.forEach((s, i) => {
      const v = next(s, `${where}.allOf[${i}]`);
      merged = isObject(merged) && isObject(v) ? { ...merged, ...v } : v === undefined ? merged : v;
    });
    if (merged !== undefined) return merged;
  }
  for (const key of ['oneOf', 'anyOf'] as const) {
    const options = node[key];
    if (Array.isArray(options) && options.length) return next(options[0], `${where}.${key}[0]`);
  }
  switch (firstType(node)) {
    case 'object': {
      const out: Obj = {};
      if (isObject(node.properties)) {
        for (const [name, prop] of Object.entries(node.properties)) {
          if (isObject(prop) && prop.writeOnly === true) continue;
          const v = next(prop, `${where}.properties.${name}`);
          if (v !== undefined) out[name] = v;
        }
      }
      return out;
    }
    case 'array': {
      const item = next(node.items, `${where}.items`);
      return item === undefined ? [] : [item];
    }
    case 'string':
      return typeof node.format === 'string' && node.format in FORMATS ? FORMATS[node.format] : 'string';
    case 'integer':
    case 'number':
      return typeof node.minimum === 'number' ? node.minimum : typeof node.exclusiveMinimum === 'number' ? node.exclusiveMinimum + 1 : 0;
    case 'boolean':
      return true;
    case 'null':
      return null;
    default:
      return undefined;
  }
}
