import { RE2JS } from 're2js';

/**
 * Largest RE2 program a tenant pattern may compile to. RE2 runs in time linear in the text and
 * in the program's size; at 100 instructions a worst-case text costs about 2 s per MiB here
 * (a typical id pattern, `cus_[A-Za-z0-9]{6,}`, is 13 and costs next to nothing).
 * @public
 */
export const MAX_PATTERN_PROGRAM = 100;

/**
 * A tenant's named pattern (`scrub_rules.patterns`), compiled for a linear-time engine (RE2):
 * a tenant writes the expression and the service runs it over every value of every record, on
 * worker threads and on the control plane's thread (`POST /v1/scrub/test`), so no expression may
 * backtrack. RE2 syntax is JavaScript's less lookahead and backreferences (lookbehind without
 * capturing groups is allowed).
 * @public
 */
export interface TenantPattern {
  /** `text` with every match replaced by `replace(match)`, left to right, matches not overlapping. */
  replace(text: string, replace: (match: string) => string): string;
}

const compile = (source: string) => RE2JS.compile(source, RE2JS.LOOKBEHINDS);

/** Compiles a pattern that {@link tenantPatternProblem} accepted; throws on any other. @public */
export function compileTenantPattern(source: string): TenantPattern {
  const re = compile(source);
  return {
    replace(text, replace) {
      const m = re.matcher(text);
      let out = '';
      let last = 0;
      while (m.find()) {
        const start = m.start();
        const end = m.end();
        if (end === start) continue;
        out += text.slice(last, start) + replace(text.slice(start, end));
        last = end;
      }
      return last === 0 ? text : out + text.slice(last);
    },
  };
}

/**
 * Why a pattern cannot be used, or null: RE2 does not compile it, its program is larger than
 * {@link MAX_PATTERN_PROGRAM}, or it matches the empty string.
 * @public
 */
export function tenantPatternProblem(source: string): string | null {
  let re: RE2JS;
  try {
    re = compile(source);
  } catch (err) {
    return `not a regular expression the service runs (RE2 syntax: no lookahead, no backreferences): ${(err as Error).message}`;
  }
  if (re.programSize() > MAX_PATTERN_PROGRAM) return `too costly to run over every value (${re.programSize()} RE2 instructions, at most ${MAX_PATTERN_PROGRAM}: use smaller repeat counts)`;
  return re.matcher('').find() ? 'matches the empty string' : null;
}
