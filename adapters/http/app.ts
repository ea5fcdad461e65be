import Router from '@koa/router';
import Koa, { type Context } from 'koa';
import { Histogram } from 'prom-client';
import { AppError, isAppError } from '../../kernel/errors.js';
import { randomUUID } from 'node:crypto';
import type { Cradle } from '../runtime.js';
import { compileRoute } from './compile-route.js';
import type { RouteSpec } from './route.js';

const REQUEST_ID_RE = /^[A-Za-z0-9._:-]{1,64}$/;

/** `/services/{id}` → `/services/:id` (the router's syntax). */
export function koaPath(path: string): string {
  return path.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1');
}

/** The group of a path: `/v1/<segment>` under /v1, else its first segment. */
function routeGroup(path: string): string {
  const first = path.indexOf('/', 1);
  const head = first === -1 ? path : path.slice(0, first);
  if (head !== '/v1' || first === -1) return head;
  const second = path.indexOf('/', first + 1);
  return second === -1 ? path : path.slice(0, second);
}

function sendError(ctx: Context, err: AppError): void {
  ctx.status = err.status;
  ctx.set(err.headers);
  ctx.body = err.toBody();
}

/**
 * The control-plane Koa app: request ids, one access log line per request (path without query,
 * no headers), one error middleware that answers `{detail, error_code}` and never a stack, the
 * overall per-IP rate limit, then the routes. Unknown paths are 404 `not_found`; a known path
 * with another method is 405 `method_not_allowed` with `Allow`.
 * @public
 */
export function createApp(cradle: Cradle, routes: readonly RouteSpec[]): Koa {
  const { logger, rateLimiter } = cradle;
  const app = new Koa({ proxy: cradle.config.trustProxy });
  app.silent = true;
  // One histogram per registry, however many apps are built over it.
  const LATENCY = 'understudy_http_request_duration_seconds';
  const latency =
    (cradle.metrics.getSingleMetric(LATENCY) as Histogram<'method' | 'route' | 'status'> | undefined) ??
    new Histogram({
      name: LATENCY,
      help: 'Control-plane request latency by method, route and status',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [cradle.metrics],
    });
  // One labelled child per (method, route, status), looked up by a plain string on the hot path.
  const children = new Map<string, { observe(v: number): void }>();
  const observe = (method: string, route: string, status: number, seconds: number) => {
    const key = `${method} ${status} ${route}`;
    let child = children.get(key);
    if (!child) children.set(key, (child = latency.labels(method, route, String(status))));
    child.observe(seconds);
  };

  // Routes are grouped by their leading static segments (`/services`, `/v1/mode`, …), one router
  // per group: @koa/router scans its routes in order, so a request only meets its own group.
  const groups = new Map<string, Router>();
  for (const spec of routes) {
    const key = routeGroup(spec.path);
    let router = groups.get(key);
    if (!router) groups.set(key, (router = new Router()));
    router.register(koaPath(spec.path), [spec.method], [compileRoute(spec, cradle)]);
  }
  const dispatchers = new Map([...groups].map(([key, router]) => [key, router.routes()]));

  /** 405 (or the answer to OPTIONS) when the path exists with other methods; else 404. */
  const unrouted = (ctx: Context): void => {
    const router = groups.get(routeGroup(ctx.path));
    const allowed = router ? [...new Set(router.match(ctx.path, ctx.method).path.flatMap((layer) => layer.methods))] : [];
    if (!allowed.length) throw new AppError('not_found', `no route for ${ctx.method} ${ctx.path}; see GET /openapi.json`);
    const allow = allowed.join(', ');
    if (ctx.method === 'OPTIONS') {
      ctx.status = 204;
      ctx.set('Allow', allow);
      return;
    }
    throw new AppError('method_not_allowed', `${ctx.path} does not accept ${ctx.method}; allowed: ${allow}`, { headers: { Allow: allow } });
  };

  // One middleware in front of the router (each layer costs on every request): request id,
  // the overall rate limit, error shaping, metrics and the access log.
  app.use(async (ctx, next) => {
    const started = performance.now();
    const incoming = ctx.get('x-request-id');
    // randomUUID draws from a cached entropy pool: no syscall per request.
    const requestId = REQUEST_ID_RE.test(incoming) ? incoming : `req_${randomUUID().replaceAll('-', '')}`;
    ctx.state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    try {
      rateLimiter.hit('global', ctx.ip);
      const dispatch = dispatchers.get(routeGroup(ctx.path));
      if (dispatch) await dispatch(ctx as never, next);
      const matched = (ctx as unknown as { matched?: { methods: string[] }[] }).matched;
      if (!matched?.some((layer) => layer.methods.includes(ctx.method))) unrouted(ctx);
    } catch (err) {
      if (isAppError(err)) {
        sendError(ctx, err);
      } else {
        logger.error({ reqId: requestId, err }, 'unhandled error');
        sendError(ctx, new AppError('internal_error', `internal error; quote request id ${requestId} when reporting it`));
      }
    }
    const ms = performance.now() - started;
    observe(ctx.method, (ctx as { _matchedRoute?: string })._matchedRoute ?? 'unmatched', ctx.status, ms / 1000);
    logger.info({ reqId: requestId, method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(ms * 10) / 10 }, 'request');
  });
  return app;
}
