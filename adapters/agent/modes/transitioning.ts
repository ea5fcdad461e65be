import type { ModeHandler } from '../exchange.js';
import type { Forwarder } from '../forward.js';
import { passthroughMode } from './passthrough.js';

/** TRANSITIONING: while the library is being rebuilt, forward without recording (as PASSTHROUGH). */
export function transitioningMode(deps: { forwarder: Forwarder }): ModeHandler {
  const passthrough = passthroughMode(deps);
  return { mode: 'TRANSITIONING', handle: (ex) => passthrough.handle(ex) };
}
