import { compileTenantPattern, definePlugin, defineScrubber, Pseudonymizer } from '../../../kernel/public.js';

/** What a redacted value becomes. */
export const REDACTED = '[redacted]';

/** An id's type tag (`cus_` in `cus_9s8d7f`) says what it is, not who: it stays. */
const tagLength = (value: string) => /^[A-Za-z]{1,12}_(?=.)/.exec(value)?.[0].length ?? 0;

/**
 * The tenant's own rules (config `scrub_rules`, per service): `keys` pseudonymize or redact the
 * value under a JSON key, header or query parameter; `patterns` pseudonymize every match of a
 * named regular expression anywhere (ids that appear in paths as well as bodies, for one), run
 * by a linear-time engine (RE2) since the tenant writes them. An id's type tag (`cus_`) stays.
 */
export default definePlugin({
  name: 'scrubber/tenant-rules',
  kind: 'scrubber',
  version: '1.0.0',
  pure: true,
  setup: () =>
    defineScrubber({
      rules: [
        { name: 'custom_key', category: 'custom', description: 'Keys the tenant lists in scrub_rules.keys as pseudonymize or redact.' },
        { name: 'custom_pattern', category: 'custom', description: 'Matches of the named expressions in scrub_rules.patterns; findings name the pattern.' },
      ],
      visitor(ctx) {
        const patterns = ctx.rules.disable.includes('custom_pattern') ? [] : Object.entries(ctx.rules.patterns).map(([name, source]) => ({ name, re: compileTenantPattern(source) }));
        const keys = ctx.rules.disable.includes('custom_key') ? {} : ctx.rules.keys;
        if (!patterns.length && !Object.values(keys).some((a) => a !== 'keep')) return (value) => value;
        const p = Pseudonymizer.for(ctx.tenantKey);
        return (value, site, found) => {
          const action = site.key === null ? undefined : keys[site.key];
          if (action === 'redact' || action === 'pseudonymize') {
            found('custom_key');
            return action === 'redact' ? REDACTED : p.text(value, tagLength(value));
          }
          let out = value;
          for (const { name, re } of patterns) {
            out = re.replace(out, (m) => {
              found(`pattern:${name}`);
              return p.text(m, tagLength(m));
            });
          }
          return out;
        };
      },
    }),
});
