import type { Static, TObject, TSchema } from '@sinclair/typebox';
import type { Context } from 'koa';
import type { Tier } from '../../kernel/domain/index.js';
import type { Cradle } from '../runtime.js';
import type { BucketName } from './middleware/rate-limit.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** What a handler receives: validated input, the tenant, and the container's cradle. @public */
export interface RouteRequest<P = Record<string, unknown>, Q = Record<string, unknown>, B = unknown> {
  params: P;
  query: Q;
  body: B;
  tenant: string;
  tier: Tier;
  /** The API key the caller authenticated with (null on anonymous routes). */
  apiKeyId: string | null;
  authenticated: boolean;
  requestId: string;
  cradle: Cradle;
  ctx: Context;
}

/** What a handler returns. */
export interface RouteResult {
  status?: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Extra fields for this call's activity record. Never secrets. */
  activity?: Record<string, unknown>;
}

/**
 * One route of the API: its contract (auth, tier, schemas, limits) and its handler. A route with
 * no handler is part of the contract but not built yet: it authenticates and gates like the
 * real one would, then answers 501 `not_implemented`.
 * @public
 */
export interface RouteSpec<P extends TObject = TObject, Q extends TObject = TObject, B extends TSchema = TSchema> {
  method: HttpMethod;
  /** OpenAPI-style path, e.g. `/services/{id}`. */
  path: string;
  summary: string;
  tag: string;
  /** Default true: needs an API key or session. `optional`: anonymous callers get less. */
  auth?: boolean | 'optional';
  /** Lowest tier that may call it; default `free`. */
  tier?: Tier;
  /** Feature name reported with `feature_gated`. */
  feature?: string;
  params?: P;
  query?: Q;
  body?: B;
  /** Body size limit in bytes; default 10 MiB. */
  bodyLimit?: number;
  /**
   * The handler reads the body itself, as a stream, up to `limit` bytes: `body` is then a
   * {@link BodyStream} (for large documents such as seed imports; 413 past the limit).
   */
  streamBody?: { limit: number };
  /** Response schemas by status. */
  responses?: Record<number, { description: string; schema?: TSchema }>;
  rateLimit?: BucketName;
  /** Honours `Idempotency-Key`. */
  idempotent?: boolean;
  deprecated?: boolean;
  /** Name of this call in the activity log; default derived from method and path. */
  action?: string;
  /** Stays callable while TRANSITIONING even though it mutates (login, logout). */
  allowWhileTransitioning?: boolean;
  /** Leaves no activity record (login and logout record nothing about keys). */
  noActivity?: boolean;
  handler?: (req: RouteRequest<Static<P>, Static<Q>, Static<B>>) => Promise<RouteResult> | RouteResult;
}

/** Declare a route with typed handler input. @public */
export function defineRoute<P extends TObject, Q extends TObject, B extends TSchema>(spec: RouteSpec<P, Q, B>): RouteSpec {
  return spec as unknown as RouteSpec;
}

/** Declare a SPEC route that is not built yet: it answers 501 after auth and tier checks. @public */
export function plannedRoute(method: HttpMethod, path: string, summary: string, tag: string, opts: { tier?: Tier; feature?: string; deprecated?: boolean; rateLimit?: BucketName } = {}): RouteSpec {
  return { method, path, summary, tag, ...opts };
}
