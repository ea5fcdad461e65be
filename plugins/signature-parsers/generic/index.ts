import { definePlugin } from '../../../kernel/public.js';

/** Anything else: stored verbatim, no parsed-signature view. */
export default definePlugin({
  name: 'signature-parser/generic',
  kind: 'signature-parser',
  version: '1.0.0',
  pure: true,
  setup: () => ({
    kind: 'generic',
    order: 1000,
    matches: () => true,
    parse: () => null,
  }),
});
