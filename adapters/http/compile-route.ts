import { createHash } from 'node:crypto';
import type { Context, Middleware } from 'koa';
import { tierAtLeast } from '../../kernel/domain/index.js';
import { AppError, isAppError } from '../../kernel/errors.js';
import type { Cradle } from '../runtime.js';
import type { ActiveKey } from '../store/repositories/api-keys.js';
import { JSON_BODY_LIMIT, openBodyStream, readJsonBody } from './body.js';
import type { RouteRequest, RouteResult, RouteSpec } from './route.js';
import { Validator } from './schema.js';
import type { TSchema } from '@sinclair/typebox';

/** Cookie set by `POST /v1/session`. */
export const SESSION_COOKIE = 'service_session';
const IDEMPOTENCY_KEY_RE = /^[\x21-\x7e]{1,255}$/;
/** Seconds a client is told to wait while TRANSITIONING. */
const TRANSITION_RETRY_AFTER = '5';

/** The raw API key header (or its alias), read straight from Node's header object: hot path. */
function apiKeyHeader(ctx: Context): string {
  const headers = ctx.req.headers;
  const value = headers['x-service-api-key'] ?? headers['x-api-key'];
  return typeof value === 'string' ? value : '';
}

/** The key a request carries (header, alias, or session cookie), or null. */
async function principal(ctx: Context, cradle: Cradle): Promise<ActiveKey | null> {
  const raw = apiKeyHeader(ctx);
  if (raw) return cradle.auth.verifyKey(raw, ctx.req.socket);
  const session = ctx.cookies.get(SESSION_COOKIE);
  if (session) return cradle.auth.verifySession(session);
  return null;
}

function emptyQueryOf(query: Validator<TSchema> | null): Readonly<Record<string, unknown>> | null {
  if (!query) return Object.freeze({});
  try {
    return Object.freeze(query.parse({}) as Record<string, unknown>);
  } catch {
    return null;
  }
}

function routeName(spec: RouteSpec): string {
  return spec.action ?? `${spec.method.toLowerCase()} ${spec.path}`;
}

/**
 * Builds the one middleware that serves a route, in this order: authenticate → tier gate →
 * named rate-limit bucket → TRANSITIONING guard → (501 when not built) → body → validation →
 * idempotency → handler → activity record. Each step throws an AppError that the error
 * middleware shapes.
 */
export function compileRoute(spec: RouteSpec, cradle: Cradle): Middleware {
  const params = spec.params ? new Validator(spec.params, 'path') : null;
  const query = spec.query ? new Validator(spec.query, 'query') : null;
  const body = spec.body ? new Validator(spec.body, 'body') : null;
  const authMode = spec.auth ?? true;
  const needTier = spec.tier ?? 'free';
  const mutating = spec.method !== 'GET';
  const bodyLimit = spec.bodyLimit ?? JSON_BODY_LIMIT;
  // Most list calls carry no query at all: validate the empty query once and reuse its defaults
  // (null when the route requires a parameter: then every call is validated and refused).
  const emptyQuery = emptyQueryOf(query);
  const { tenant, licence } = cradle;

  return async (ctx) => {
    const key = authMode === false ? null : await principal(ctx, cradle);
    if (authMode === true && !key) {
      throw new AppError('unauthenticated', apiKeyHeader(ctx) ? 'the API key is unknown or revoked' : 'send an API key in the X-Service-Api-Key header');
    }
    if (!tierAtLeast(licence.tier, needTier)) {
      const feature = spec.feature ?? spec.tag;
      throw new AppError('feature_gated', `${feature} needs the ${needTier} tier; this deployment's licence is ${licence.tier}`, { extra: { feature } });
    }
    if (spec.rateLimit) cradle.rateLimiter.hit(spec.rateLimit, ctx.ip);
    const guard = async () => {
      if ((cradle.modeCache.peek(tenant) ?? (await cradle.modeCache.get(tenant))) === 'TRANSITIONING') {
        throw new AppError('transitioning', 'the service is transitioning from LEARN to MOCK and is read-only; retry shortly', { headers: { 'Retry-After': TRANSITION_RETRY_AFTER } });
      }
    };
    // A repeat of an idempotent call gets its first answer even while TRANSITIONING (the first
    // call, a transition start, is what made it so): there the guard runs after the lookup.
    const idemKey = spec.idempotent ? ctx.get('idempotency-key') : '';
    const guarded = mutating && !spec.allowWhileTransitioning;
    if (guarded && !idemKey) await guard();
    const handler = spec.handler;
    if (!handler) throw new AppError('not_implemented', `${spec.method} ${spec.path} is part of the API contract but is not built yet`);

    const record = mutating && key && !spec.noActivity;
    let result: RouteResult | undefined;
    let failure: unknown;
    try {
      const stream = spec.streamBody ? openBodyStream(ctx, spec.streamBody.limit) : undefined;
      const raw = mutating && !stream ? await readJsonBody(ctx, bodyLimit) : undefined;
      if (raw !== undefined && !body) throw new AppError('validation_error', `body: ${spec.method} ${spec.path} takes no body`);
      const req: RouteRequest = {
        params: (params ? params.parse(ctx.params) : {}) as Record<string, unknown>,
        query: (ctx.querystring === '' && emptyQuery ? emptyQuery : query ? query.parse({ ...ctx.query }) : {}) as Record<string, unknown>,
        body: stream ?? (body ? body.parse(raw ?? (spec.body?.type === 'object' ? {} : raw)) : undefined),
        tenant,
        tier: licence.tier,
        apiKeyId: key?.id ?? null,
        authenticated: key !== null,
        requestId: String(ctx.state.requestId),
        cradle,
        ctx,
      };
      result = idemKey ? await withIdempotency(cradle, ctx, idemKey, req, guarded ? async (r) => (await guard(), handler(r)) : handler) : await handler(req);
    } catch (err) {
      failure = err;
    }
    if (record && !(isAppError(failure) && failure.code === 'rate_limited')) {
      const status = failure ? (isAppError(failure) ? failure.status : 500) : (result?.status ?? 200);
      const detail = failure ? { error_code: isAppError(failure) ? failure.code : 'internal_error' } : (result?.activity ?? {});
      await cradle.activity.record(tenant, { actor: key.id, action: routeName(spec), method: spec.method, path: ctx.path, status, request_id: String(ctx.state.requestId), detail });
    }
    if (failure) throw failure;
    ctx.status = result!.status ?? 200;
    if (result!.body !== undefined) ctx.body = result!.body;
    if (result!.headers) ctx.set(result!.headers);
  };
}

/**
 * Runs a handler under an Idempotency-Key: the first call stores its answer for 24 h; a repeat
 * with the same request gets that answer back without running again; the same key on a
 * different request is 409 `idempotency_conflict`. A failed call leaves the key free.
 */
async function withIdempotency(cradle: Cradle, ctx: Context, key: string, req: RouteRequest, handler: NonNullable<RouteSpec['handler']>): Promise<RouteResult> {
  if (!IDEMPOTENCY_KEY_RE.test(key)) throw new AppError('validation_error', 'header Idempotency-Key: 1 to 255 visible ASCII characters');
  const fingerprint = createHash('sha256').update(JSON.stringify([req.params, req.query, req.body ?? null])).digest('hex');
  const claim = await cradle.idempotency.claim(req.tenant, key, ctx.method, ctx.path, fingerprint);
  if (claim.state === 'done') return { status: claim.status, body: claim.body, headers: { ...claim.headers, 'Idempotent-Replayed': 'true' } };
  if (claim.state === 'mismatch') throw new AppError('idempotency_conflict', 'this Idempotency-Key was already used with a different request; use a new key');
  if (claim.state === 'in_progress') throw new AppError('idempotency_conflict', 'a request with this Idempotency-Key is still being processed; retry shortly');
  try {
    const result = await handler(req);
    await cradle.idempotency.complete(req.tenant, key, { status: result.status ?? 200, body: result.body ?? null, headers: result.headers });
    return result;
  } catch (err) {
    await cradle.idempotency.release(req.tenant, key);
    throw err;
  }
}
