import type { Pseudonymizer } from '../../../kernel/public.js';

/** A credential found by its shape in any text, and how many leading characters (its public prefix) stay. */
interface TokenFormat {
  rule: 'jwt' | 'private_key' | 'token_format' | 'bearer_token' | 'url_credentials' | 'secret_query_param';
  /** Text every match contains: without it, the format is not tried. */
  needs?: string;
  source: string;
  replace(match: string, pseudo: Pseudonymizer): string;
}

const keepPrefix = (prefix: RegExp) => (m: string, p: Pseudonymizer) => p.text(m, prefix.exec(m)![0].length);

/** The length of a well-known token's public prefix (`sk_live_`, `ghp_` …), 0 for any other value. */
export const tokenPrefixLength = (value: string) => PREFIX.exec(value)?.[0].length ?? 0;

/** Well-known token formats: the prefix says what it is and stays; the secret part is replaced. */
const PREFIXED = [
  '(?:sk|rk|pk)_(?:live|test)_[0-9A-Za-z]{10,}', // Stripe keys
  'whsec_[0-9A-Za-z+/=]{20,}', // Stripe webhook secrets
  'gh[pousr]_[0-9A-Za-z]{30,}', // GitHub tokens
  'github_pat_[0-9A-Za-z_]{40,}',
  'xox[abposr]-[0-9A-Za-z-]{10,}', // Slack
  '(?:AKIA|ASIA)[0-9A-Z]{16}', // AWS access key ids
  'AIza[0-9A-Za-z_-]{35}', // Google API keys
  'sk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}', // OpenAI, Anthropic
  'SG\\.[A-Za-z0-9_-]{16,}\\.[A-Za-z0-9_-]{16,}', // SendGrid
  'npm_[A-Za-z0-9]{36}',
  'glpat-[A-Za-z0-9_-]{20,}', // GitLab
  'shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}', // Shopify
  'sq0[a-z]{3}-[0-9A-Za-z_-]{22,}', // Square
  'usk_[0-9A-Za-z]{40}', // Understudy's own API keys
];
const PREFIX = /^(?:(?:sk|rk|pk)_(?:live|test)_|whsec_|gh[pousr]_|github_pat_|xox[abposr]-|AKIA|ASIA|AIza|sk-(?:proj-|ant-)?|SG\.|npm_|glpat-|shp(?:at|ca|pa|ss)_|sq0[a-z]{3}-|usk_)/;

/** Query parameter names that carry a secret, in a URL's query or inside any text (a `next` link). */
export const SECRET_QUERY_NAMES =
  'api[-_]?key|key|token|access[-_]token|refresh[-_]token|id[-_]token|auth|auth[-_]token|sig|signature|secret|client[-_]secret|password|pass|pwd|session|session[-_]?id|private[-_]token|jwt|x-amz-signature|x-amz-credential|x-amz-security-token|x-goog-signature|x-goog-credential';

const FORMATS: readonly TokenFormat[] = [
  {
    rule: 'private_key',
    needs: '-----BEGIN',
    // The body is anything without a run of five dashes, at most 16 KiB (a PEM key is smaller): it
    // stops at the next BEGIN or END line, so no text is scanned twice and a match is linear.
    source: '-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----(?:[^-]|-(?!----)){0,16384}-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----',
    replace: (m, p) => {
      const open = m.indexOf('-----', 5) + 5;
      const close = m.lastIndexOf('-----END ');
      return m.slice(0, open) + p.text(m.slice(open, close)) + m.slice(close);
    },
  },
  // Only from the start of a run of token characters: tried at every `eyJ` inside one, each try
  // would scan to the run's end (quadratic on a long run).
  { rule: 'jwt', needs: 'eyJ', source: '(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{5,}\\.eyJ[A-Za-z0-9_-]{5,}\\.[A-Za-z0-9_-]*', replace: (m, p) => p.text(m, 3) },
  { rule: 'token_format', source: `(?<![A-Za-z0-9])(?:${PREFIXED.join('|')})`, replace: keepPrefix(PREFIX) },
  { rule: 'bearer_token', needs: 'earer', source: '\\b[Bb]earer\\s+[A-Za-z0-9._~+/-]{8,}=*', replace: keepPrefix(/^[Bb]earer\s+/) },
  {
    rule: 'secret_query_param',
    needs: '=',
    source: `[?&](?:${SECRET_QUERY_NAMES})=[^&\\s"'#<>]{4,}`,
    replace: (m, p) => {
      const eq = m.indexOf('=') + 1;
      return m.slice(0, eq) + p.text(m.slice(eq));
    },
  },
  { rule: 'url_credentials', needs: '://', source: '(?<![A-Za-z0-9+.-])[a-z][a-z0-9+.-]*://[^\\s:/@]+:[^\\s/@]+@', replace: (m, p) => m.replace(/:([^:/@]+)@$/, (_all, secret: string) => `:${p.text(secret)}@`) },
];

for (const f of FORMATS) if (new RegExp(`${f.source}|`).exec('')!.length !== 1) throw new Error(`credential format ${f.rule} has a capturing group`);
/** Combined expressions by which formats a text can hold (a bit per format with `needs`), made on first use. */
const combined = new Map<number, { re: RegExp; formats: TokenFormat[] }>();
function combinedFor(text: string): { re: RegExp; formats: TokenFormat[] } {
  let mask = 0;
  FORMATS.forEach((f, i) => {
    if (f.needs && text.includes(f.needs)) mask |= 1 << i;
  });
  let c = combined.get(mask);
  if (!c) {
    const formats = FORMATS.filter((f, i) => !f.needs || mask & (1 << i));
    combined.set(mask, (c = { re: new RegExp(formats.map((f) => `(${f.source})`).join('|'), 'g'), formats }));
  }
  return c;
}

/** Replaces every credential found by its shape in `text`, skipping disabled rules. */
export function replaceTokens(text: string, pseudo: Pseudonymizer, disabled: ReadonlySet<string>, found: (rule: string) => void): string {
  if (text.length < 16) return text;
  const { re, formats } = combinedFor(text);
  return text.replace(re, (match: string, ...groups: unknown[]) => {
    const format = formats[groups.findIndex((g, n) => n < formats.length && g !== undefined)]!;
    if (disabled.has(format.rule)) return match;
    found(format.rule);
    return format.replace(match, pseudo);
  });
}
