import { isDeepStrictEqual } from 'node:util';
import FindMyWay from 'find-my-way';
import type { HTTPMethod } from 'find-my-way';
import type { MockEntry } from '../../kernel/domain/index.js';

/** How a request matched, or why it did not. */
export type MatchResult =
  | { entry: MockEntry; kind: 'exact' | 'template' }
  | { entry: null; nearest: NearMiss[] };

/** A library entry close to an unmatched request, and which parts of the request differ. */
export interface NearMiss {
  id: string;
  method: string;
  uri_template: string;
  differs: string[];
}

/** The request parts matching looks at. */
export interface MatchRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  body: Buffer;
  /** The status asked for with `Prefer: code=404` (as Prism takes it); only entries with it answer. */
  preferCode?: number;
}

interface ServiceIndex {
  /** Entries by `METHOD path` of their concrete path. */
  exact: Map<string, MockEntry[]>;
  /** Entries by template, in a radix tree: lookup cost does not grow with the library. */
  templates: FindMyWay.Instance<FindMyWay.HTTPVersion.V1>;
  /** The tree's stores by `METHOD template`, to add entries to a template already routed. */
  byTemplate: Map<string, MockEntry[]>;
  all: MockEntry[];
}

/** `{id}` → `:id`; colons in static text are doubled (find-my-way's escape). */
function routerPath(template: string): string {
  return template.replace(/:/g, '::').replace(/\{([^}/]+)\}/g, (_, name: string) => `:${name.replace(/[^A-Za-z0-9_]/g, '_')}`);
}

function queryMatches(entry: MockEntry, query: URLSearchParams): boolean {
  if (!entry.query) return true;
  for (const [key, values] of Object.entries(entry.query)) {
    const got = query.getAll(key);
    if (got.length !== values.length || !values.every((v) => got.includes(v))) return false;
  }
  return true;
}

function bodyMatches(entry: MockEntry, body: Buffer): boolean {
  const m = entry.body_matcher;
  if (!m) return true;
  if ('equals' in m) return body.toString('utf8') === m.equals;
  try {
    return isDeepStrictEqual(JSON.parse(body.toString('utf8')), m.json);
  } catch {
    return false;
  }
}

const specificity = (e: MockEntry) => (e.query ? Object.keys(e.query).length : 0) + (e.body_matcher ? 1 : 0);
/** 2xx answers first, lowest first; then the other statuses, lowest first. */
const statusRank = (status: number) => (status >= 200 && status < 300 ? status - 1000 : status);

/**
 * Candidate order, fixed when the library is built: most conditions first, then by status
 * (lowest 2xx first), then as they came. So the first candidate that accepts is the answer.
 */
function byPreference(a: MockEntry, b: MockEntry): number {
  return specificity(b) - specificity(a) || statusRank(a.response.status) - statusRank(b.response.status);
}

/** The first candidate (in preference order) whose matchers accept the request and whose status it asked for, if any. */
function best(candidates: readonly MockEntry[] | undefined, req: MatchRequest): MockEntry | null {
  if (!candidates) return null;
  for (const e of candidates) {
    if ((req.preferCode === undefined || e.response.status === req.preferCode) && queryMatches(e, req.query) && bodyMatches(e, req.body)) return e;
  }
  return null;
}

/** `Prefer: code=404` → 404 (Prism's header for picking a response); undefined when absent or malformed. */
export function preferredCode(header: string | undefined): number | undefined {
  if (!header) return undefined;
  const m = /(?:^|[,;\s])code=(\d{3})\b/.exec(header);
  return m ? Number(m[1]) : undefined;
}

/**
 * The mock library in memory, indexed per service by exact `METHOD path` and by URI template
 * (find-my-way). Exact matches win over template matches; among candidates, the one with the
 * most query and body conditions wins, then the lowest 2xx status (several statuses for one
 * request come from OpenAPI and Postman imports), unless the request asks for a status with
 * `Prefer: code=…`. Built once per library version, then read-only.
 * @public
 */
export class MockLibrary {
  readonly #services = new Map<string, ServiceIndex>();
  readonly size: number;

  constructor(entries: readonly MockEntry[]) {
    this.size = entries.length;
    for (const entry of entries) {
      let index = this.#services.get(entry.service_id);
      if (!index) {
        index = { exact: new Map(), templates: FindMyWay({ ignoreTrailingSlash: false, caseSensitive: true }), byTemplate: new Map(), all: [] };
        this.#services.set(entry.service_id, index);
      }
      index.all.push(entry);
      const key = `${entry.method} ${entry.path}`;
      const list = index.exact.get(key);
      if (list) list.push(entry);
      else index.exact.set(key, [entry]);
      if (entry.uri_template !== entry.path) {
        const tkey = `${entry.method} ${entry.uri_template}`;
        const routed = index.byTemplate.get(tkey);
        if (routed) routed.push(entry);
        else {
          const store = [entry];
          try {
            index.templates.on(entry.method as HTTPMethod, routerPath(entry.uri_template), () => undefined, store);
            index.byTemplate.set(tkey, store);
          } catch {
            // A template the radix tree cannot hold (an unknown method, clashing parameter
            // names) still matches by its exact path.
          }
        }
      }
    }
    for (const index of this.#services.values()) {
      for (const list of index.exact.values()) if (list.length > 1) list.sort(byPreference);
      for (const list of index.byTemplate.values()) if (list.length > 1) list.sort(byPreference);
    }
  }

  /** Entries of a service (for coverage and hints). */
  entries(serviceId: string): readonly MockEntry[] {
    return this.#services.get(serviceId)?.all ?? [];
  }

  /** The URI template an entry of the service has for this method and path, ignoring query and body. */
  endpointOf(serviceId: string, method: string, path: string): string | null {
    const index = this.#services.get(serviceId);
    if (!index) return null;
    const exact = index.exact.get(`${method} ${path}`);
    if (exact?.length) return exact[0]!.uri_template;
    const route = index.templates.find(method as HTTPMethod, path);
    return route ? (route.store as MockEntry[])[0]!.uri_template : null;
  }

  match(serviceId: string, req: MatchRequest): MatchResult {
    const index = this.#services.get(serviceId);
    if (index) {
      const exact = best(index.exact.get(`${req.method} ${req.path}`), req);
      if (exact) return { entry: exact, kind: 'exact' };
      const route = index.templates.find(req.method as HTTPMethod, req.path);
      const templated = route ? best(route.store as MockEntry[], req) : null;
      if (templated) return { entry: templated, kind: 'template' };
    }
    return { entry: null, nearest: nearest(index?.all ?? [], req) };
  }
}

/** Up to three entries closest to the request, each with what differs. Runs only on a miss. */
function nearest(entries: readonly MockEntry[], req: MatchRequest): NearMiss[] {
  const got = req.path.split('/');
  const scored = entries.map((e) => {
    const differs: string[] = [];
    if (e.method !== req.method) differs.push(`method (expected ${e.method})`);
    const want = e.uri_template.split('/');
    if (want.length !== got.length) differs.push(`path length (expected ${want.length - 1} segments, got ${got.length - 1})`);
    for (let i = 1; i < Math.min(want.length, got.length); i++) {
      const w = want[i]!;
      if (!/^\{[^}]+\}$/.test(w) && w !== got[i]) differs.push(`path segment ${i} (expected "${w}", got "${got[i]}")`);
    }
    if (!queryMatches(e, req.query)) differs.push(`query (expected ${Object.keys(e.query ?? {}).join(', ')})`);
    if (!bodyMatches(e, req.body)) differs.push('body');
    if (req.preferCode !== undefined && e.response.status !== req.preferCode) differs.push(`status (Prefer asked for ${req.preferCode}, this entry answers ${e.response.status})`);
    return { e, differs };
  });
  scored.sort((a, b) => a.differs.length - b.differs.length);
  return scored.slice(0, 3).map(({ e, differs }) => ({ id: e.id, method: e.method, uri_template: e.uri_template, differs }));
}
