import type { Exchange, ModeHandler } from '../exchange.js';
import type { Forwarder } from '../forward.js';
import { trafficRecord } from './forwarding.js';

/** LEARN: forward, stream the answer back, and record the exchange off the response path. */
export function learnMode(deps: { forwarder: Forwarder; record: (ex: Exchange, record: ReturnType<typeof trafficRecord>) => void; maxBodyBytes: () => number }): ModeHandler {
  return {
    mode: 'LEARN',
    async handle(ex) {
      const max = deps.maxBodyBytes();
      const outcome = await deps.forwarder.forward(ex, max);
      deps.record(ex, trafficRecord(ex, outcome, max));
      return { match: outcome.response ? 'forwarded' : 'upstream_error' };
    },
  };
}
