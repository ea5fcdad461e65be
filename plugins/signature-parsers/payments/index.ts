import { definePlugin } from '../../../kernel/public.js';

/** `Payments-Signature: t=<unix>,v1=<hex>[,v1=<hex>…]` — the Stripe-style scheme. */
export default definePlugin({
  name: 'signature-parser/payments',
  kind: 'signature-parser',
  version: '1.0.0',
  pure: true,
  setup: () => ({
    kind: 'payments',
    order: 10,
    matches: (headers) => 'payments-signature' in headers,
    parse(headers) {
      const raw = headers['payments-signature'] ?? '';
      let timestamp: number | null = null;
      const versions: string[] = [];
      for (const part of raw.split(',')) {
        const eq = part.indexOf('=');
        if (eq < 1) continue;
        const key = part.slice(0, eq).trim();
        const value = part.slice(eq + 1).trim();
        if (key === 't') {
          const t = Number(value);
          timestamp = Number.isInteger(t) ? t : null;
        } else if (/^v\d+$/.test(key) && value) {
          versions.push(key);
        }
      }
      return { scheme: 'payments', timestamp, nonce: null, signature_count: versions.length, versions, headers: ['payments-signature'] };
    },
  }),
});
