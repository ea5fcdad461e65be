import type { ModeHandler } from '../exchange.js';
import type { Forwarder } from '../forward.js';

/** PASSTHROUGH: forward and stream the answer back; record nothing. */
export function passthroughMode(deps: { forwarder: Forwarder }): ModeHandler {
  return {
    mode: 'PASSTHROUGH',
    async handle(ex) {
      const outcome = await deps.forwarder.forward(ex, null);
      return { match: outcome.response ? 'forwarded' : 'upstream_error' };
    },
  };
}
