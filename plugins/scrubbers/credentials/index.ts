import { definePlugin, defineScrubber, Pseudonymizer, type ScrubRuleInfo } from '../../../kernel/public.js';
import { replaceTokens, SECRET_QUERY_NAMES, tokenPrefixLength } from './formats.js';

/** Header names that carry a secret whatever their value looks like. */
const SECRET_HEADER = /^(?:x-api-key|api-key|apikey|x-apikey|x-auth-token|x-access-token|x-refresh-token|x-csrf-token|x-xsrf-token|x-service-api-key|x-amz-security-token|x-goog-api-key|x-session-token|x-session-id)$|(?:^|[-_])(?:api[-_]?key|token|secret|password|passwd|signature|credential|session)(?:$|[-_])/;
const SECRET_QUERY = new RegExp(`^(?:${SECRET_QUERY_NAMES})$`);
/** JSON keys (spelling aside) holding a secret: exact names, or names ending in one (`webhook_secret`, `github_token`). */
const SECRET_KEY = /^(?:pass|pwd|pin|otp|totp|cvc|cvv|cvc2|cvv2|mfacode|signature|sessionid|credentials?)$|(?:password|passwd|passphrase|secret|token|apikey|privatekey)$/;
const secretKeys = new Map<string, boolean>();
/** Whether a JSON key (spelling aside) names a secret; keys repeat, so the answer is kept. */
function isSecretKey(key: string): boolean {
  let yes = secretKeys.get(key);
  if (yes === undefined) {
    yes = SECRET_KEY.test(key.replace(/[^a-z0-9]/g, ''));
    if (secretKeys.size < 10_000) secretKeys.set(key, yes);
  }
  return yes;
}

const RULES: ScrubRuleInfo[] = [
  { name: 'authorization_header', category: 'credential', description: 'Authorization and Proxy-Authorization: the scheme (and a known token prefix) stays, the credential is replaced.' },
  { name: 'cookie', category: 'credential', description: 'Cookie and Set-Cookie: every cookie value (names and attributes stay).' },
  { name: 'secret_header', category: 'credential', description: 'API-key, token, secret, signature and session headers (X-Api-Key, X-Auth-Token, Stripe-Signature …).' },
  { name: 'secret_query_param', category: 'credential', description: 'Query and form parameters such as api_key, key, token, access_token, signature, client_secret, password, also inside URLs in any text.' },
  { name: 'secret_json_key', category: 'credential', description: 'JSON keys such as password, secret, token, api_key, private_key, cvc, pin (and names ending in them).' },
  { name: 'jwt', category: 'credential', description: 'JSON Web Tokens anywhere.' },
  { name: 'token_format', category: 'credential', description: 'Well-known token formats anywhere (Stripe sk_live_/whsec_, GitHub ghp_, Slack xox*, AWS AKIA, Google AIza, OpenAI sk-, SendGrid, npm, GitLab …); the prefix stays.' },
  { name: 'bearer_token', category: 'credential', description: '"Bearer <token>" anywhere in text.' },
  { name: 'private_key', category: 'credential', description: 'PEM private keys anywhere; the BEGIN/END lines stay.' },
  { name: 'url_credentials', category: 'credential', description: 'Passwords in URLs (scheme://user:password@host).' },
];

/** `name=value` pairs split by `;`: each value replaced (Cookie), or only the first (Set-Cookie, whose rest are attributes). */
function cookieValues(value: string, onlyFirst: boolean, replace: (v: string) => string): string {
  return value
    .split(';')
    .map((part, i) => {
      if (onlyFirst && i > 0) return part;
      const eq = part.indexOf('=');
      const v = eq === -1 ? '' : part.slice(eq + 1).trim();
      return v ? `${part.slice(0, eq + 1)}${part.slice(eq + 1).replace(v, replace(v))}` : part;
    })
    .join(';');
}

/**
 * Credentials: Authorization, Cookie and Set-Cookie, API-key and token headers and query
 * parameters, secret-like JSON keys, and JWTs, PEM private keys, well-known token formats and
 * bearer tokens wherever they appear. Replacements are the tenant's keyed, format-preserving
 * pseudonyms, so one token maps to one pseudonym across every mock.
 */
export default definePlugin({
  name: 'scrubber/credentials',
  kind: 'scrubber',
  version: '1.0.0',
  pure: true,
  setup: () =>
    defineScrubber({
      rules: RULES,
      visitor(ctx) {
        const p = Pseudonymizer.for(ctx.tenantKey);
        const disabled = new Set(ctx.rules.disable);
        const on = (rule: string) => !disabled.has(rule);
        return (value, site, found) => {
          const key = site.key;
          if (site.part === 'header' && key !== null) {
            if ((key === 'authorization' || key === 'proxy-authorization') && on('authorization_header')) {
              const m = /^(\S+\s+)(\S[\s\S]*)$/.exec(value);
              found('authorization_header');
              return m ? m[1] + p.text(m[2]!, tokenPrefixLength(m[2]!)) : p.text(value);
            }
            if ((key === 'cookie' || key === 'set-cookie') && on('cookie')) {
              const next = cookieValues(value, key === 'set-cookie', (v) => p.text(v));
              if (next !== value) found('cookie');
              return next;
            }
            if (SECRET_HEADER.test(key) && on('secret_header') && value) {
              found('secret_header');
              return p.text(value);
            }
          }
          if ((site.part === 'query' || site.part === 'form') && key !== null && SECRET_QUERY.test(key) && on('secret_query_param') && value) {
            found('secret_query_param');
            return p.text(value);
          }
          if (site.part === 'body' && key !== null && isSecretKey(key) && on('secret_json_key') && value) {
            found('secret_json_key');
            return p.text(value);
          }
          return replaceTokens(value, p, disabled, found);
        };
      },
    }),
});
