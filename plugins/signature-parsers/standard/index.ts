import { definePlugin } from '../../../kernel/public.js';

const HEADERS = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;

/** Standard Webhooks: `webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<b64> [v1a,<b64>…]`. */
export default definePlugin({
  name: 'signature-parser/standard',
  kind: 'signature-parser',
  version: '1.0.0',
  pure: true,
  setup: () => ({
    kind: 'standard',
    order: 30,
    matches: (headers) => HEADERS.every((h) => h in headers),
    parse(headers) {
      const t = Number(headers['webhook-timestamp']);
      const versions = (headers['webhook-signature'] ?? '')
        .split(' ')
        .map((s) => s.trim())
        .filter((s) => s.includes(','))
        .map((s) => s.slice(0, s.indexOf(',')));
      return {
        scheme: 'standard',
        timestamp: Number.isInteger(t) ? t : null,
        nonce: headers['webhook-id'] ?? null,
        signature_count: versions.length,
        versions,
        headers: [...HEADERS],
      };
    },
  }),
});
