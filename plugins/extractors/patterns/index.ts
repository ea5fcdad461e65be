import { definePlugin, headerValue, type RecordedHeaders, type EndpointPatterns, type ExchangeRecord, type JsonSchema, type PatternExtractor, type QueryParamPattern } from '../../../kernel/public.js';
import { inferSchema, mergeSchemas } from './json-schema.js';

const NAME = 'extractor/patterns';

/**
 * What one exchange contributes: its query pairs and its bodies' schemas, as JSON text (most
 * exchanges of an endpoint share a schema: text crosses threads cheaply and merges once).
 */
interface Features {
  query: [string, string][];
  request: string | null;
  response: string | null;
}

function bodySchema(headers: RecordedHeaders, body: unknown): string | null {
  if (typeof body !== 'string' || !body) return null;
  const type = headerValue(headers, 'content-type');
  const trimmed = body.trimStart();
  if (!/[/+]json\b/i.test(type) && !trimmed.startsWith('{') && !trimmed.startsWith('[')) return null;
  try {
    return JSON.stringify(inferSchema(JSON.parse(body)));
  } catch {
    return null;
  }
}

function queryPairs(uri: string): [string, string][] {
  const q = uri.indexOf('?');
  return q === -1 ? [] : [...new URLSearchParams(uri.slice(q + 1))];
}

function featuresOf(r: ExchangeRecord): Features {
  return (
    (r.features?.[NAME] as Features | undefined) ?? {
      query: queryPairs(r.request.uri),
      request: bodySchema(r.request.headers, r.request.body),
      response: r.response ? bodySchema(r.response.headers, r.response.body) : null,
    }
  );
}

const TYPES: [QueryParamPattern['type'], RegExp][] = [
  ['integer', /^-?\d+$/],
  ['number', /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/],
  ['boolean', /^(true|false)$/],
];

/** A query parameter's pattern from every value it had and how many requests carried it. */
function queryPattern(values: readonly string[], requests: number, samples: number): QueryParamPattern {
  const distinct = new Set(values);
  const type = TYPES.find(([, re]) => values.every((v) => re.test(v)))?.[0] ?? 'string';
  // A value new on nearly every request (a timestamp, nonce, cache buster), or one shaped like
  // an epoch time, is something a mock should not match on.
  const volatile = (requests >= 3 && distinct.size / requests >= 0.8) || values.every((v) => /^\d{10,13}$/.test(v));
  return { required: requests === samples, type, distinct: distinct.size, volatile, ...(!volatile && distinct.size <= 10 && { values: [...distinct].sort() }) };
}

/**
 * Patterns per endpoint (method and URI template): each query parameter's type, presence,
 * cardinality and volatility, and a JSON Schema of the request bodies and of the response
 * bodies per status, inferred per exchange in the worker pool and merged across the traffic.
 */
export default definePlugin({
  name: NAME,
  kind: 'extractor',
  version: '1.0.0',
  pure: true,
  setup: (): PatternExtractor => ({
    produces: 'patterns',
    normalizeBatch: (records) => records.map((r) => ({ ...r, features: { ...r.features, [NAME]: featuresOf(r) } })),
    extract(records, templates) {
      const endpoints = new Map<string, { method: string; uri_template: string; records: ExchangeRecord[] }>();
      records.forEach((r, i) => {
        const key = `${r.request.method} ${templates[i]}`;
        const e = endpoints.get(key) ?? endpoints.set(key, { method: r.request.method, uri_template: templates[i]!, records: [] }).get(key)!;
        e.records.push(r);
      });
      return [...endpoints.values()].map(({ method, uri_template, records: list }): EndpointPatterns => {
        const values = new Map<string, string[]>();
        const carried = new Map<string, number>();
        let request: JsonSchema | null = null;
        const responses: Record<string, JsonSchema> = {};
        // Each distinct schema is parsed and merged once per place it goes.
        const merged = new Set<string>();
        const merge = (into: JsonSchema | null | undefined, text: string, where: string): JsonSchema => {
          const schema = JSON.parse(text) as JsonSchema;
          merged.add(`${where}\0${text}`);
          return into ? mergeSchemas(into, schema) : schema;
        };
        for (const r of list) {
          const f = featuresOf(r);
          for (const [name, value] of f.query) (values.get(name) ?? values.set(name, []).get(name)!).push(value);
          for (const name of new Set(f.query.map(([n]) => n))) carried.set(name, (carried.get(name) ?? 0) + 1);
          if (f.request && !merged.has(`request\0${f.request}`)) request = merge(request, f.request, 'request');
          const status = String(r.response?.status ?? '');
          if (f.response && status && !merged.has(`${status}\0${f.response}`)) responses[status] = merge(responses[status], f.response, status);
        }
        const query = Object.fromEntries([...values].sort(([a], [b]) => (a < b ? -1 : 1)).map(([name, vs]) => [name, queryPattern(vs, carried.get(name)!, list.length)]));
        return { method, uri_template, samples: list.length, query, request_schema: request, response_schemas: responses };
      });
    },
  }),
});
