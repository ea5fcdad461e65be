import { Type } from '@sinclair/typebox';
import { MODES, type Mode } from '../../../kernel/domain/index.js';
import { defineRoute, type RouteSpec } from '../route.js';

const ModeName = Type.Union(MODES.map((m) => Type.Literal(m)));

const ModeState = Type.Object({
  mode: ModeName,
  source: Type.Union([Type.Literal('agent'), Type.Literal('database')], { description: 'agent: read through the agent probe; database: the agent did not answer.' }),
  updated_at: Type.Union([Type.String(), Type.Null()]),
});

/** `GET/POST /v1/mode`. */
export const modeRoutes: RouteSpec[] = [
  defineRoute({
    method: 'GET',
    path: '/v1/mode',
    summary: 'Current global mode, read through the agent health probe',
    tag: 'mode',
    responses: { 200: { description: 'The mode', schema: ModeState } },
    async handler({ cradle, tenant }) {
      const stored = await cradle.tenantState.mode(tenant);
      const agent = await cradle.healthProbes.agent();
      const agentMode = agent.status === 'ok' ? (agent.detail.mode as Mode | undefined) : undefined;
      return { body: agentMode && MODES.includes(agentMode) ? { mode: agentMode, source: 'agent', updated_at: stored.updated_at } : { ...stored, source: 'database' } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/mode',
    summary: 'Set the global mode',
    tag: 'mode',
    body: Type.Object({ mode: Type.Union([Type.Literal('learn'), Type.Literal('mock'), Type.Literal('passthrough')]) }, { additionalProperties: false }),
    responses: { 200: { description: 'The new mode', schema: Type.Object({ mode: ModeName, previous: ModeName, updated_at: Type.String() }) } },
    async handler({ cradle, tenant, body }) {
      const result = await cradle.tenantState.setMode(tenant, body.mode.toUpperCase() as Mode, { byOperator: true });
      return { body: result, activity: { mode: result.mode, previous: result.previous } };
    },
  }),
];
