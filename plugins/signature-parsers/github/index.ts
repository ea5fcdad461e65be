import { definePlugin } from '../../../kernel/public.js';

/** GitHub: `X-Hub-Signature-256: sha256=<hex>` (and the legacy `X-Hub-Signature: sha1=<hex>`). */
export default definePlugin({
  name: 'signature-parser/github',
  kind: 'signature-parser',
  version: '1.0.0',
  pure: true,
  setup: () => ({
    kind: 'github',
    order: 20,
    matches: (headers) => 'x-hub-signature-256' in headers || 'x-hub-signature' in headers,
    parse(headers) {
      const used = ['x-hub-signature-256', 'x-hub-signature'].filter((h) => h in headers);
      const versions = used.map((h) => (headers[h] ?? '').split('=')[0]!.trim()).filter(Boolean);
      return {
        scheme: 'github',
        timestamp: null,
        nonce: headers['x-github-delivery'] ?? null,
        signature_count: versions.length,
        versions,
        headers: used,
      };
    },
  }),
});
