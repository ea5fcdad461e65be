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
  type RecordedHeaders,
} from '../../../kernel/public.js';
import { Refs } from './refs.js';
import { sampleOf, type SampleBudget } from './sample.js';

type Obj = Record<string, unknown>;
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
/** Sample nodes one response may generate, and one document in all. */
const PER_SAMPLE = 5_000;
const PER_DOCUMENT = 2_000_000;
/**
 * Response body text one document may produce. An example reached through `$ref` is written out
 * once per response that uses it, so a small document can ask for gigabytes; real descriptions
 * stay far below this (GitHub's 12 MB one yields 2.4 MB of bodies).
 */
const MAX_BODY_TEXT = 64 * 1024 * 1024;

/** What a `servers` list says: the base path operations hang under, and the host. Null when the list is absent. */
function serverOf(servers: unknown, where: string): { base: string; host: string | null } | null {
  if (!Array.isArray(servers) || !servers.length) return null;
  const server = servers[0];
  if (!isObject(server) || typeof server.url !== 'string') throw invalid(`${where}[0].url`, 'required');
  const vars = isObject(server.variables) ? server.variables : {};
  const url = server.url.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const v = vars[name];
    return isObject(v) && v.default !== undefined ? String(v.default) : name;
  });
  const absolute = /^[a-z][a-z0-9+.-]*:\/\//i.exec(url);
  if (!absolute) return { base: url.replace(/[?#].*$/, '').replace(/\/+$/, ''), host: null };
  try {
    const parsed = new URL(url);
    return { base: parsed.pathname.replace(/\/+$/, ''), host: parsed.host || null };
  } catch {
    throw invalid(`${where}[0].url`, `'${url.slice(0, 200)}' is not a URL`);
  }
}

/** The body and content type of one response, from its first JSON-like media type. */
function bodyOf(response: Obj, where: string, refs: Refs, budget: SampleBudget, ctx: ImportContext): { type: string | null; body: string | null } {
  if (!isObject(response.content)) return { type: null, body: null };
  const types = Object.keys(response.content);
  const type = types.find((t) => t === 'application/json') ?? types.find((t) => /json/i.test(t)) ?? types[0];
  if (type === undefined) return { type: null, body: null };
  const mwhere = at(where, 'content', type);
  const media = refs.object(response.content[type], mwhere);
  if (!media) return { type, body: null };
  let value: unknown;
  if (media.example !== undefined) value = media.example;
  else if (isObject(media.examples) && Object.keys(media.examples).length) {
    const [name, first] = Object.entries(media.examples)[0]!;
    const example = refs.object(first, at(mwhere, 'examples', name));
    if (example?.value !== undefined) value = example.value;
    else if (example?.externalValue !== undefined) ctx.warn(`${at(mwhere, 'examples', name)}: externalValue is not fetched; a sample is generated instead`);
  }
  if (value === undefined && media.schema !== undefined) {
    budget.perSample = PER_SAMPLE;
    budget.truncated = false;
    value = sampleOf(media.schema, refs, `${mwhere}.schema`, budget);
    if (budget.truncated) ctx.warn(`${mwhere}.schema: the generated sample was cut short (schema too deep or too large)`);
  }
  if (value === undefined) return { type, body: null };
  const contentType = type === '*/*' ? (typeof value === 'string' ? 'text/plain' : 'application/json') : type;
  return { type: contentType, body: typeof value === 'string' && !/json/i.test(contentType) ? value : JSON.stringify(value) };
}

function headersOf(response: Obj, where: string, refs: Refs, budget: SampleBudget): [string, string][] {
  if (!isObject(response.headers)) return [];
  const out: [string, string][] = [];
  for (const [name, raw] of Object.entries(response.headers)) {
    if (name.toLowerCase() === 'content-type') continue;
    const header = refs.object(raw, at(where, 'headers', name));
    if (!header) continue;
    budget.perSample = 50;
    const value = header.example !== undefined ? header.example : sampleOf(header.schema, refs, at(where, 'headers', name, 'schema'), budget);
    if (value !== undefined && value !== null && typeof value !== 'object') out.push([name, String(value)]);
  }
  return out;
}

/** Sample values for a path's parameters, from their example(s) or schema; operation parameters win over path-level ones. */
function pathSamples(lists: unknown[], where: string, refs: Refs, budget: SampleBudget): Record<string, string> {
  const samples: Record<string, string> = {};
  for (const list of lists) {
    if (!Array.isArray(list)) continue;
    list.forEach((raw, i) => {
      const p = refs.object(raw, at(where, 'parameters', i));
      if (!p || p.in !== 'path' || typeof p.name !== 'string') return;
      const examples = isObject(p.examples) ? Object.values(p.examples).map((e) => refs.object(e, where)?.value) : [];
      budget.perSample = 50;
      const value = p.example ?? examples.find((v) => v !== undefined) ?? sampleOf(p.schema, refs, at(where, 'parameters', i, 'schema'), budget);
      if (value !== undefined && value !== null && typeof value !== 'object' && String(value) !== '') samples[p.name] = String(value);
    });
  }
  return samples;
}

function statusOf(code: string, where: string): number {
  const status = /^\d{3}$/.test(code) ? Number(code) : /^[1-5]XX$/i.test(code) ? Number(code[0]) * 100 : NaN;
  if (!isStatus(status)) throw invalid(where, `'${code.slice(0, 20)}' is not a status code, a range such as 2XX, or default`);
  return status;
}

async function* readOpenApi(source: AsyncIterable<Uint8Array>, ctx: ImportContext): AsyncIterable<MockDraft> {
  const doc = await readDocument(source, ctx.mediaType);
  if (!isObject(doc)) throw invalid('document', 'must be an OpenAPI object');
  if (doc.swagger !== undefined) throw invalid('swagger', 'Swagger 2.0 is not supported; convert the document to OpenAPI 3 first');
  if (typeof doc.openapi !== 'string') throw invalid('openapi', 'required (3.0.x or 3.1.x)');
  if (!/^3\.[01]\.\d+/.test(doc.openapi)) throw invalid('openapi', `version '${doc.openapi.slice(0, 20)}' is not supported; 3.0.x and 3.1.x are`);
  if (doc.paths === undefined) {
    ctx.warn('the document has no paths (webhooks and components alone make no mocks)');
    return;
  }
  if (!isObject(doc.paths)) throw invalid('paths', 'must be an object');
  const refs = new Refs(doc);
  const budget: SampleBudget = { perSample: PER_SAMPLE, total: PER_DOCUMENT, truncated: false };
  const root = serverOf(doc.servers, 'servers') ?? { base: '', host: null };
  let bodyText = 0;
  for (const [path, rawItem] of Object.entries(doc.paths)) {
    const where = at('paths', path);
    if (!path.startsWith('/')) throw invalid(where, 'a path must start with /');
    const item = refs.object(rawItem, where);
    if (!item) {
      ctx.skip(where, 'an external $ref is not followed');
      continue;
    }
    const pathServer = serverOf(item.servers, `${where}.servers`) ?? root;
    for (const method of METHODS) {
      if (item[method] === undefined) continue;
      const owhere = at(where, method);
      const op = refs.object(item[method], owhere);
      if (!op) continue;
      if (ctx.signal.aborted) throw invalid('document', 'the import was cancelled');
      const server = serverOf(op.servers, `${owhere}.servers`) ?? pathServer;
      const template = `${server.base}${path}`;
      const samples = pathSamples([item.parameters, op.parameters], owhere, refs, budget);
      const concrete = fillTemplate(template, (name) => samples[name] ?? name);
      if (!isObject(op.responses)) throw invalid(`${owhere}.responses`, 'required');
      const codes = Object.keys(op.responses);
      for (const code of codes) {
        const rwhere = at(owhere, 'responses', code);
        if (code === 'default' && codes.length > 1) {
          ctx.skip(rwhere, 'a default response has no status of its own; the explicit statuses are imported');
          continue;
        }
        const status = code === 'default' ? 200 : statusOf(code, rwhere);
        const response = refs.object(op.responses[code], rwhere);
        if (!response) {
          ctx.skip(rwhere, 'an external $ref is not followed');
          continue;
        }
        const { type, body } = bodyOf(response, rwhere, refs, budget, ctx);
        bodyText += body?.length ?? 0;
        if (bodyText > MAX_BODY_TEXT) throw invalid(rwhere, `the document's response bodies add up past ${MAX_BODY_TEXT / 2 ** 20} MiB (examples reused through $ref are written out once per response); trim the examples`);
        const headers: RecordedHeaders = recordedHeaders(headersOf(response, rwhere, refs, budget));
        if (type) headers['content-type'] = type;
        yield { method: method.toUpperCase(), path: concrete, uri_template: template, query: null, body_matcher: null, response: { status, headers, body }, origin: rwhere, host: server.host };
      }
    }
  }
}

/**
 * OpenAPI 3.0 and 3.1, JSON or YAML: one entry per operation and response status, path templates
 * kept as templates (with a concrete sample path), bodies from `example`/`examples` or a sample
 * generated from the schema, local `$ref`s followed (external ones reported, never fetched).
 */
export default definePlugin({
  name: 'importer-openapi',
  kind: 'importer',
  version: '1.0.0',
  setup: () => ({
    format: 'openapi',
    mediaTypes: JSON_OR_YAML,
    binding: 'service' as const,
    captured: false,
    read: readOpenApi,
  }),
});
