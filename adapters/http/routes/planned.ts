import { plannedRoute as planned, type RouteSpec } from '../route.js';

const pro = (feature: string) => ({ tier: 'pro' as const, feature });

const statecharts: RouteSpec[] = [
  planned('GET', '/v1/statecharts', 'Statechart catalog', 'statecharts', pro('statecharts')),
  planned('GET', '/v1/statecharts/{id}', 'One statechart: states and transitions', 'statecharts', pro('statecharts')),
  planned('GET', '/v1/statecharts/{id}/resources', 'Captured resources in each state', 'statecharts', pro('statecharts')),
  planned('PATCH', '/v1/statecharts/{id}', 'Override a bundled statechart or update a custom one', 'statecharts', pro('statecharts')),
  planned('POST', '/v1/statecharts', 'Create a custom statechart', 'statecharts', pro('statecharts')),
  planned('DELETE', '/v1/statecharts/{id}', 'Delete an override or a custom statechart', 'statecharts', pro('statecharts')),
];

/**
 * Every SPEC route not built yet. Each authenticates and gates by tier like the real one will,
 * then answers 501 `not_implemented`; the OpenAPI document lists them as such.
 */
export const plannedRoutes: RouteSpec[] = [
  planned('GET', '/v1/drift/services', 'Drift summary per service', 'drift', pro('drift_detection')),
  planned('GET', '/v1/drift/events', 'Drift events', 'drift', pro('drift_detection')),
  planned('GET', '/v1/drift/events/{id}', 'One drift event with its schema diff', 'drift', pro('drift_detection')),
  planned('POST', '/v1/drift/events/{id}/acknowledge', 'Acknowledge a drift event', 'drift', pro('drift_detection')),
  planned('GET', '/v1/drift/freshness-score', 'Freshness score of a service', 'drift', pro('drift_detection')),
  planned('GET', '/v1/drift/sparkline', '30-day drift counts', 'drift', pro('drift_detection')),
  ...statecharts,
  ...statecharts.map((r) => ({ ...r, path: r.path.replace('/v1/statecharts', '/v1/sequences/statecharts'), deprecated: true })),
  planned('POST', '/training/sessions', 'Create a training session', 'training', pro('training')),
  planned('GET', '/training/sessions', 'Training sessions', 'training', pro('training')),
  planned('GET', '/training/sessions/{id}', 'One training session', 'training', pro('training')),
  planned('POST', '/training/sessions/{id}/train', 'Start fine-tuning', 'training', { ...pro('training'), rateLimit: 'training_train' }),
  planned('GET', '/training/sessions/{id}/status', 'Training progress', 'training', pro('training')),
  planned('POST', '/training/sessions/{id}/activate', "Activate a session's adapter", 'training', pro('training')),
  planned('DELETE', '/training/sessions/{id}', 'Delete a session and its adapter files', 'training', pro('training')),
  planned('POST', '/training/generate-prompt', 'Preview a fine-tuning prompt', 'training', pro('training')),
  planned('POST', '/training/finetune', 'Fine-tune', 'training', { ...pro('training'), rateLimit: 'finetune' }),
  planned('GET', '/insights', 'Dashboard aggregates', 'insights'),
  planned('POST', '/v1/eval/run', 'Run a Tier-0 eval for a service', 'eval', { ...pro('eval'), rateLimit: 'eval_run' }),
  planned('GET', '/v1/eval/runs', 'Recent eval runs', 'eval', pro('eval')),
  planned('GET', '/v1/wide-events', 'Wide-event stream', 'wide-events', pro('wide_events')),
  planned('GET', '/v1/fidelity', 'Mock Fidelity Score per service', 'fidelity', pro('fidelity')),
  planned('GET', '/v1/resources/{service_id}', 'Captured resource index of a service', 'resources', pro('resource_index')),
  planned('GET', '/v1/repair/proposals', 'Mock-repair proposals', 'repair', pro('repair')),
  planned('POST', '/v1/repair/proposals/{id}/approve', 'Approve a repair proposal', 'repair', pro('repair')),
  planned('POST', '/v1/repair/proposals/{id}/reject', 'Reject a repair proposal', 'repair', pro('repair')),
];
