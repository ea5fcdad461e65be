import { Tokenizer, TokenParser, TokenType, type ParsedElementInfo } from '@streamparser/json';
import { Type, type Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import {
  AppError,
  at,
  bodyFromBase64,
  bodyMatcherFor,
  definePlugin,
  invalid,
  isStatus,
  MAX_NESTING,
  queryOf,
  recordedHeaders,
  type ImportContext,
  type MockDraft,
} from '../../../kernel/public.js';

const NameValue = Type.Object({ name: Type.String(), value: Type.String() });
/** The parts of a HAR 1.2 entry an import reads; anything else may be there and is ignored. */
const Entry = Type.Object({
  request: Type.Object({
    method: Type.String({ minLength: 1 }),
    url: Type.String({ minLength: 1 }),
    postData: Type.Optional(Type.Object({ mimeType: Type.Optional(Type.String()), text: Type.Optional(Type.String()) })),
  }),
  response: Type.Object({
    status: Type.Integer(),
    headers: Type.Array(NameValue),
    content: Type.Object({ size: Type.Optional(Type.Number()), mimeType: Type.Optional(Type.String()), text: Type.Optional(Type.String()), encoding: Type.Optional(Type.String()) }),
  }),
});
const checkEntry = TypeCompiler.Compile(Entry);
const VERSIONS = ['1.1', '1.2'];
const METHOD_RE = /^[A-Za-z]{1,16}$/;
const BODYLESS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** One entry as a draft, or the reason it is left out (a string). Throws for a malformed entry. */
function toDraft(raw: unknown, where: string): MockDraft | string {
  if (!checkEntry.Check(raw)) {
    const first = checkEntry.Errors(raw).First();
    throw invalid(`${where}${first?.path.replaceAll('/', '.') ?? ''}`, first?.message.toLowerCase() ?? 'is not a HAR entry');
  }
  const entry = raw as Static<typeof Entry>;
  const { request, response } = entry;
  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    throw invalid(`${where}.request.url`, `'${request.url.slice(0, 100)}' is not an absolute URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `a ${url.protocol} request is not HTTP`;
  if (!METHOD_RE.test(request.method)) throw invalid(`${where}.request.method`, `'${request.method.slice(0, 20)}' is not an HTTP method`);
  const status = response.status;
  if (status === 0) return 'no response (status 0: the request failed, was blocked or was cancelled)';
  if (!isStatus(status)) throw invalid(`${where}.response.status`, `${status} is not an HTTP status (100-599)`);
  if (status < 200) return `a ${status} informational or upgrade response (e.g. a WebSocket) is not mocked`;
  if (status === 304) return '304 Not Modified carries no body; record with the browser cache disabled';
  const method = request.method.toUpperCase();
  const content = response.content;
  const body = content.text === undefined || content.text === '' ? null : content.encoding === 'base64' ? bodyFromBase64(content.text) : content.text;
  const headers = recordedHeaders(response.headers.map((h) => [h.name, h.value] as const));
  if (body !== null && content.mimeType && !headers['content-type']) headers['content-type'] = content.mimeType;
  return {
    method,
    path: url.pathname,
    query: queryOf(url.searchParams),
    body_matcher: BODYLESS.has(method) ? null : bodyMatcherFor(request.postData?.text, request.postData?.mimeType),
    response: { status, headers, body },
    origin: where,
    host: url.host,
  };
}

function streamError(err: unknown, entryIndex: number | null): AppError {
  if (err instanceof AppError) return err;
  const message = (err as Error).message;
  const where = entryIndex === null ? 'document' : `log.entries[${entryIndex}]`;
  return invalid(where, `malformed JSON (${message.replace(/^Unexpected /, 'unexpected ')})`);
}

/**
 * Reads a HAR as a stream: one entry at a time is held, so a 100 MB capture never sits in memory
 * whole. Nesting deeper than MAX_NESTING is refused as it arrives.
 */
async function* readHar(source: AsyncIterable<Uint8Array>, ctx: ImportContext): AsyncIterable<MockDraft> {
  const tokenizer = new Tokenizer();
  // Only entries and the version are emitted; with keepStack off, an emitted entry leaves its
  // array, so memory holds one entry at a time. (Asking for `$.log.entries` itself would make the
  // parser keep the whole array to emit it at the end.)
  const parser = new TokenParser({ paths: ['$.log.version', '$.log.entries.*'], keepStack: false });
  const ready: ParsedElementInfo[] = [];
  let depth = 0;
  let index = 0;
  let version: unknown;
  let sawEntries = false;
  let unsaved = 0;
  // Browsers often keep no body for a response the page never read. Such a repeat of an exchange
  // whose body was kept must not replace it (the later of two duplicates wins otherwise).
  const kept = new Map<string, string>();
  // The tokens are watched as they pass: depth, so nesting is refused before anything is built,
  // and the value of `log.entries`, which must open an array.
  let keyAtRoot: unknown;
  let keyAtLog: unknown;
  let entriesNext = false;
  let inEntries = false;
  tokenizer.onToken = (info) => {
    const token = info.token;
    if (entriesNext) {
      entriesNext = false;
      if (token !== TokenType.LEFT_BRACKET) throw invalid('log.entries', 'must be an array');
      sawEntries = inEntries = true;
    }
    if (token === TokenType.LEFT_BRACE || token === TokenType.LEFT_BRACKET) {
      if (++depth > MAX_NESTING) throw invalid(inEntries ? `log.entries[${index}]` : 'document', `nests deeper than ${MAX_NESTING} levels (at byte ${info.offset})`);
    } else if (token === TokenType.RIGHT_BRACE || token === TokenType.RIGHT_BRACKET) {
      if (--depth === 2) inEntries = false;
    } else if (token === TokenType.STRING && depth === 1) keyAtRoot = info.value;
    else if (token === TokenType.STRING && depth === 2) keyAtLog = info.value;
    else if (token === TokenType.COLON && depth === 2 && keyAtRoot === 'log' && keyAtLog === 'entries') entriesNext = true;
    parser.write(info);
  };
  parser.onValue = (info) => {
    ready.push(info);
  };
  const drain = function* (): Generator<MockDraft> {
    for (const { value, key, parent } of ready) {
      if (key === 'version' && !Array.isArray(parent)) {
        version = value;
      } else {
        if (!Array.isArray(parent)) throw invalid('log.entries', 'must be an array');
        const where = at('log.entries', index++);
        const draft = toDraft(value, where);
        if (typeof draft === 'string') ctx.skip(where, draft);
        else {
          const key = `${draft.method} ${draft.response.status} ${(value as { request: { url: string } }).request.url}`;
          const size = (value as { response: { content: { size?: number } } }).response.content.size;
          const lost = draft.response.body === null && size !== 0;
          if (lost && kept.has(key)) ctx.skip(where, `repeats ${kept.get(key)}, whose body was saved; this one's was not`);
          else {
            if (lost) unsaved++;
            else if (draft.response.body !== null) kept.set(key, where);
            yield draft;
          }
        }
      }
    }
    ready.length = 0;
  };
  for await (const chunk of source) {
    if (ctx.signal.aborted) throw new AppError('validation_error', 'document: the import was cancelled');
    try {
      tokenizer.write(chunk);
    } catch (err) {
      throw streamError(err, sawEntries || index > 0 ? index : null);
    }
    yield* drain();
  }
  if (!parser.isEnded) throw invalid(index > 0 ? at('log.entries', index) : 'document', 'the document ends early (truncated?)');
  yield* drain();
  if (version === undefined && !sawEntries) throw invalid('log', 'required: a HAR document is {"log": {"version": "1.2", "entries": [...]}}');
  if (typeof version !== 'string' || !VERSIONS.includes(version)) {
    throw invalid('log.version', version === undefined ? 'required' : `HAR ${JSON.stringify(version).slice(0, 20)} is not supported; export HAR 1.2 (or 1.1)`);
  }
  if (!sawEntries) throw invalid('log.entries', 'required');
  if (unsaved) ctx.warn(`${unsaved} responses have no saved body (the browser did not keep it); their mocks answer an empty body`);
}

/** HAR 1.1/1.2 (browser and proxy exports): each exchange becomes an entry of the service its host belongs to. */
export default definePlugin({
  name: 'importer-har',
  kind: 'importer',
  version: '1.0.0',
  setup: () => ({
    format: 'har',
    mediaTypes: ['application/json', '+json', 'application/har+json'],
    binding: 'host' as const,
    captured: true,
    read: readHar,
  }),
});
