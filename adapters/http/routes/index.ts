import { Type } from '@sinclair/typebox';
import { PACKAGE_VERSION } from '../../version.js';
import { buildOpenApi } from '../openapi.js';
import { defineRoute, type RouteSpec } from '../route.js';
import { healthRoutes } from './health.js';
import { libraryRoutes } from './library.js';
import { modeRoutes } from './mode.js';
import { operationalRoutes } from './operational.js';
import { plannedRoutes } from './planned.js';
import { scrubRoutes } from './scrub.js';
import { seedRoutes } from './seed.js';
import { servicesRoutes } from './services.js';
import { trafficRoutes } from './traffic.js';
import { transitionRoutes } from './transition.js';
import { webhooksRoutes } from './webhooks.js';

const built: RouteSpec[] = [...healthRoutes, ...modeRoutes, ...servicesRoutes, ...operationalRoutes, ...trafficRoutes, ...webhooksRoutes, ...libraryRoutes, ...seedRoutes, ...transitionRoutes, ...scrubRoutes];

const metricsRoute = defineRoute({
  method: 'GET',
  path: '/metrics',
  summary: 'Prometheus metrics of the control plane',
  tag: 'health',
  responses: { 200: { description: 'Prometheus text exposition' } },
  async handler({ cradle }) {
    return { body: await cradle.metrics.metrics(), headers: { 'Content-Type': cradle.metrics.contentType } };
  },
});

let document: unknown;
const openApiRoute = defineRoute({
  method: 'GET',
  path: '/openapi.json',
  summary: 'This OpenAPI 3.1 document',
  tag: 'meta',
  auth: false,
  responses: { 200: { description: 'The document', schema: Type.Object({ openapi: Type.String() }, { additionalProperties: true }) } },
  handler: () => ({ body: (document ??= buildOpenApi(ALL_ROUTES, PACKAGE_VERSION)) }),
});

/** Every route of the control plane, built and planned. @public */
export const ALL_ROUTES: readonly RouteSpec[] = [...built, metricsRoute, openApiRoute, ...plannedRoutes];
