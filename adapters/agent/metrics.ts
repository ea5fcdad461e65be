import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** IO operations whose failures are counted in `service_io_errors_total{operation}`. */
export type IoOperation = 'webhook_open' | 'webhook_write' | 'webhook_mkdir' | 'traffic_open' | 'traffic_write' | 'traffic_mkdir';

/** The agent's Prometheus metrics (`GET /metrics` on the agent). @public */
export class AgentMetrics {
  readonly registry = new Registry();
  readonly requests = new Counter({ name: 'understudy_agent_requests_total', help: 'Requests by service, mode and match type', labelNames: ['service', 'mode', 'match'], registers: [this.registry] });
  readonly latency = new Histogram({
    name: 'understudy_agent_request_duration_seconds',
    help: 'Agent answer latency by mode',
    labelNames: ['mode'],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [this.registry],
  });
  readonly ioErrors = new Counter({ name: 'service_io_errors_total', help: 'Failed writes to the data volume, by operation', labelNames: ['operation'], registers: [this.registry] });
  readonly librarySize = new Gauge({ name: 'understudy_agent_library_entries', help: 'Mock entries held in memory', registers: [this.registry] });
  readonly webhooks = new Counter({ name: 'understudy_agent_webhooks_total', help: 'Webhook captures by signature kind and outcome', labelNames: ['kind', 'persisted'], registers: [this.registry] });

  constructor(opts: { defaultMetrics?: boolean } = {}) {
    if (opts.defaultMetrics !== false) collectDefaultMetrics({ register: this.registry });
    // Every operation shows from the start, at zero, so alerts can rate() it.
    for (const op of ['webhook_open', 'webhook_write', 'webhook_mkdir', 'traffic_open', 'traffic_write', 'traffic_mkdir']) this.ioErrors.inc({ operation: op }, 0);
  }
}
