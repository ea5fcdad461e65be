import { decodeBody, UNREPLAYED_HEADERS } from '../../../kernel/domain/index.js';
import { AppError } from '../../../kernel/errors.js';
import type { MockEntry } from '../../../kernel/domain/index.js';
import type { ModeHandler } from '../exchange.js';
import { sendError } from '../exchange.js';
import { preferredCode, type MockLibrary, type NearMiss } from '../library.js';


/** Prepared answers, built once per entry: status, header list and body bytes. */
const prepared = new WeakMap<MockEntry, { headers: string[]; body: Buffer }>();

function answerOf(entry: MockEntry) {
  let p = prepared.get(entry);
  if (!p) {
    const headers: string[] = [];
    for (const [name, value] of Object.entries(entry.response.headers)) {
      if (UNREPLAYED_HEADERS.has(name.toLowerCase())) continue;
      for (const v of Array.isArray(value) ? value : [value]) headers.push(name, v);
    }
    const body = decodeBody(entry.response.body);
    headers.push('content-length', String(body.length));
    p = { headers, body };
    prepared.set(entry, p);
  }
  return p;
}

/** MOCK: answer from the library; a miss is 404 `no_mock_match` with the nearest entries. */
export function mockMode(deps: {
  library: () => MockLibrary;
  latencyMs: () => number;
  onHit: (entry: MockEntry) => void;
  onMiss: (serviceId: string, method: string, path: string, search: string, nearest: NearMiss[]) => void;
}): ModeHandler {
  return {
    mode: 'MOCK',
    async handle(ex) {
      const prefer = ex.req.headers.prefer;
      const result = deps.library().match(ex.service.id, { method: ex.method, path: ex.path, query: new URLSearchParams(ex.search), body: ex.body, preferCode: typeof prefer === 'string' ? preferredCode(prefer) : undefined });
      const delay = deps.latencyMs();
      if (delay > 0) await new Promise((r) => setTimeout(r, delay));
      if (!result.entry) {
        deps.onMiss(ex.service.id, ex.method, ex.path, ex.search, result.nearest);
        const detail = `no mock of service ${ex.service.id} matches ${ex.method} ${ex.uri}`;
        sendError(ex.res, 404, new AppError('no_mock_match', detail, { extra: { near_misses: result.nearest } }).toBody());
        return { match: 'miss' };
      }
      const answer = answerOf(result.entry);
      ex.res.writeHead(result.entry.response.status, answer.headers);
      ex.res.end(ex.method === 'HEAD' ? undefined : answer.body);
      deps.onHit(result.entry);
      return { match: result.kind };
    },
  };
}
