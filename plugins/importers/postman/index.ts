import {
  at,
  definePlugin,
  fillTemplate,
  invalid,
  isObject,
  isStatus,
  JSON_OR_YAML,
  readDocument,
  recordedHeaders,
  type ImportContext,
  type MockDraft,
} from '../../../kernel/public.js';
import { resolveUrl, type Variables } from './url.js';

type Obj = Record<string, unknown>;
const SCHEMA_RE = /\/collection\/v2\.[01]\.\d+\/collection\.json$/;

/** `[{key, value, disabled}]` → a lookup, inner scopes first. */
function scope(list: unknown, outer: Variables): Variables {
  if (!Array.isArray(list)) return outer;
  const own = new Map<string, string>();
  for (const v of list) if (isObject(v) && typeof v.key === 'string' && v.disabled !== true && v.value !== undefined && v.value !== null) own.set(v.key, String(v.value));
  return own.size ? (name) => own.get(name) ?? outer(name) : outer;
}

/** Postman headers come as `[{key, value, disabled}]`, or (v2.0) as one `Name: value` string per line. */
function headerPairs(header: unknown): [string, string][] {
  if (typeof header === 'string') {
    return header.split(/\r?\n/).flatMap((line): [string, string][] => {
      const i = line.indexOf(':');
      return i > 0 ? [[line.slice(0, i).trim(), line.slice(i + 1).trim()]] : [];
    });
  }
  if (!Array.isArray(header)) return [];
  return header.filter((h): h is Obj => isObject(h) && typeof h.key === 'string' && h.disabled !== true).map((h) => [h.key as string, String(h.value ?? '')]);
}

const PREVIEW_TYPES: Record<string, string> = { json: 'application/json', html: 'text/html', xml: 'application/xml', text: 'text/plain' };

/** One saved example response of a request as a draft; a string says why it is left out. */
function exampleDraft(example: Obj, request: unknown, vars: Variables, where: string, ctx: ImportContext): MockDraft | string {
  if (example.code === undefined || example.code === null) return `example "${String(example.name ?? '')}" has no status code`;
  if (!isStatus(example.code)) throw invalid(`${where}.code`, `${JSON.stringify(example.code).slice(0, 20)} is not an HTTP status (100-599)`);
  // The example's own request is what was sent when it was saved; fall back to the item's.
  const req = example.originalRequest ?? request;
  const url = isObject(req) ? req.url : req;
  const method = isObject(req) && typeof req.method === 'string' ? req.method.toUpperCase() : 'GET';
  const resolved = resolveUrl(url, vars, isObject(req) ? `${where}.originalRequest.url` : where);
  for (const name of resolved.unresolved) ctx.warn(`${where}: variable {{${name}}} has no value; taken as a path parameter or left out of the query`);
  const headers = recordedHeaders(headerPairs(example.header));
  const preview = typeof example._postman_previewlanguage === 'string' ? PREVIEW_TYPES[example._postman_previewlanguage] : undefined;
  if (preview && !headers['content-type']) headers['content-type'] = preview;
  const body = typeof example.body === 'string' && example.body !== '' ? example.body : null;
  return {
    method,
    path: fillTemplate(resolved.template, (name) => resolved.samples[name] ?? name),
    uri_template: resolved.template,
    query: resolved.query,
    body_matcher: null,
    response: { status: example.code, headers, body },
    origin: where,
    host: resolved.host,
  };
}

function* walk(items: unknown, where: string, vars: Variables, ctx: ImportContext): Generator<MockDraft> {
  if (!Array.isArray(items)) throw invalid(where, 'must be an array of requests and folders');
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    const here = at(where, i);
    if (!isObject(item)) throw invalid(here, 'must be an object');
    const inner = scope(item.variable, vars);
    if (Array.isArray(item.item)) {
      yield* walk(item.item, `${here}.item`, inner, ctx);
      continue;
    }
    if (item.request === undefined) throw invalid(here, 'has neither request nor item (a folder)');
    const examples = Array.isArray(item.response) ? item.response : [];
    if (!examples.length) {
      ctx.skip(here, `"${String(item.name ?? '')}" has no saved example response; save one in Postman to mock it`);
      continue;
    }
    for (let e = 0; e < examples.length; e++) {
      const example = examples[e];
      const ewhere = at(`${here}.response`, e);
      if (!isObject(example)) throw invalid(ewhere, 'must be an object');
      const draft = exampleDraft(example, item.request, inner, ewhere, ctx);
      if (typeof draft === 'string') ctx.skip(ewhere, draft);
      else yield draft;
    }
  }
}

async function* readPostman(source: AsyncIterable<Uint8Array>, ctx: ImportContext): AsyncIterable<MockDraft> {
  const doc = await readDocument(source, ctx.mediaType);
  if (!isObject(doc)) throw invalid('document', 'must be a Postman collection object {info, item}');
  if (!isObject(doc.info)) throw invalid('info', 'required');
  const schema = doc.info.schema;
  if (typeof schema !== 'string') throw invalid('info.schema', 'required (a collection v2.0 or v2.1 schema URL)');
  if (!SCHEMA_RE.test(schema)) throw invalid('info.schema', `'${schema.slice(0, 120)}' is not collection v2.0 or v2.1; export the collection as v2.1`);
  const vars = scope(doc.variable, () => undefined);
  yield* walk(doc.item, 'item', vars, ctx);
}

/**
 * Postman collections v2.0 and v2.1: folders nest, collection/folder/item variables resolve
 * (`{{baseUrl}}`), path variables (`:id`) become templates, and each saved example response
 * becomes an entry; a request with no saved example is reported as skipped.
 */
export default definePlugin({
  name: 'importer-postman',
  kind: 'importer',
  version: '1.0.0',
  setup: () => ({
    format: 'postman',
    mediaTypes: JSON_OR_YAML,
    binding: 'service' as const,
    captured: true,
    read: readPostman,
  }),
});
