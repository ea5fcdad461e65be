import { isIPv6 } from 'node:net';
import { ibanValid, luhnValid, type Pseudonymizer } from '../../../kernel/public.js';

/** A PII rule that finds values by their shape in any text: its name, and how to replace a match (null = not PII after all). */
interface ShapeRule {
  name: string;
  source: string;
  /** A character every match contains: without it in the text, the rule is not tried. */
  needs?: '@' | ':';
  replace(match: string, pseudo: Pseudonymizer): string | null;
}

const OCTET = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';

/** Rules by shape, tried in this order at each position (the first that matches there wins). */
const SHAPE_RULES: readonly ShapeRule[] = [
  {
    name: 'email',
    needs: '@',
    // Percent-encoded too (`jane%40example.com` in a link inside a body), to the same pseudonym.
    source: "(?<![A-Za-z0-9._%+'-])[A-Za-z0-9._%+'-]+(?:@|%40)(?:[A-Za-z0-9-]+\\.)+[A-Za-z]{2,24}",
    replace: (m, p) => (m.includes('@') ? p.email(m) : p.email(m.replace(/%40(?!.*%40)/, '@')).replace(/@(?!.*@)/, '%40')),
  },
  {
    name: 'iban',
    source: '\\b[A-Z]{2}\\d{2}(?: ?[A-Z0-9]){11,30}\\b',
    replace: (m, p) => (ibanValid(m.replace(/ /g, '')) ? p.iban(m) : null),
  },
  {
    name: 'card_number',
    source: '(?<![\\w.-])\\d(?:[ -]?\\d){11,18}(?!\\w|[.-]\\d)',
    replace: (m, p) => {
      // Card networks start with 2-6 (ms timestamps and snowflake ids start with 1).
      const digits = m.replace(/\D/g, '');
      return /^[2-6]/.test(digits) && luhnValid(digits) ? p.card(m) : null;
    },
  },
  {
    name: 'national_id',
    // US social security numbers as written: area 001-899 but 666, group 01-99, serial 0001-9999.
    source: '(?<![\\w-])(?!000|666|9\\d\\d)\\d{3}-(?!00)\\d{2}-(?!0000)\\d{4}(?![\\w-])',
    replace: (m, p) => p.digits(m),
  },
  {
    name: 'phone',
    source: [
      // International with separators, or E.164: +44 20 7946 0958, +1-555-010-9999, +4915112345678
      '(?<![\\w+])\\+\\d{1,3}(?:[ .-]?\\(?\\d{1,4}\\)?){2,5}(?:\\s?(?:x|ext\\.?)\\s?\\d{1,6})?(?![\\w])',
      // North American and similar: (555) 010-9999, 1-555-010-9999, 555.010.9999, with an extension
      '(?<![\\w.-])(?:1[ .-])?(?:\\(\\d{3}\\)\\s?|\\d{3}[ .-])\\d{3}[ .-]\\d{4}(?:\\s?(?:x|ext\\.?)\\s?\\d{1,6})?(?![\\w-])',
    ].join('|'),
    replace: (m, p) => (m.replace(/\D/g, '').length >= 8 ? p.digits(m) : null),
  },
  {
    name: 'ip_address',
    source: `(?<![\\w./:-])${OCTET}(?:\\.${OCTET}){3}(?![\\w]|\\.\\d)`,
    replace: (m, p) => p.ipv4(m),
  },
  {
    name: 'ip_address',
    needs: ':',
    source: '(?<![\\w:])(?:[0-9A-Fa-f]{1,4}:){2,7}[0-9A-Fa-f]{1,4}(?![\\w:])|(?<![\\w:])(?:[0-9A-Fa-f]{1,4}:){1,6}:(?:[0-9A-Fa-f]{1,4}:?){1,6}(?![\\w:])',
    replace: (m, p) => (isIPv6(m) && (m.match(/[0-9a-f]+/gi) ?? []).length >= 3 ? p.ipv6(m) : null),
  },
];

// Each rule is one group of a combined expression, so a rule may not capture on its own.
for (const r of SHAPE_RULES) if (new RegExp(`${r.source}|`).exec('')!.length !== 1) throw new Error(`PII rule ${r.name} has a capturing group`);

/** A combined expression of some rules, and which rule each of its groups is. */
interface Combined {
  re: RegExp;
  rules: readonly ShapeRule[];
}
const combine = (rules: readonly ShapeRule[]): Combined => ({ re: new RegExp(rules.map((r) => `(${r.source})`).join('|'), 'g'), rules });
// An e-mail needs an '@' (or '%40') and an IPv6 address a ':'; leaving out what cannot match saves a scan
// of every position for each (they are the costly ones).
const VARIANTS: Combined[] = [0, 1, 2, 3].map((v) => combine(SHAPE_RULES.filter((r) => !r.needs || (r.needs === '@' ? v & 1 : v & 2))));

/** The shape rules' names, for the rule list. */
export const SHAPE_RULE_NAMES = [...new Set(SHAPE_RULES.map((r) => r.name))];

/**
 * Replaces every PII value found by its shape in `text` (e-mail, IBAN, card number passing Luhn,
 * US SSN, phone number, IPv4/IPv6 address), skipping disabled rules; calls `found` per match.
 */
export function replaceShapes(text: string, pseudo: Pseudonymizer, disabled: ReadonlySet<string>, found: (rule: string) => void): string {
  // Every shape needs a digit or an '@' (an encoded one has digits); most strings have neither.
  if (text.length < 7 || !/[\d@]/.test(text)) return text;
  const { re, rules } = VARIANTS[(text.includes('@') || text.includes('%40') ? 1 : 0) | (text.includes(':') ? 2 : 0)]!;
  return text.replace(re, (match: string, ...groups: unknown[]) => {
    const rule = rules[groups.findIndex((g, n) => n < rules.length && g !== undefined)]!;
    if (disabled.has(rule.name)) return match;
    const next = rule.replace(match, pseudo);
    if (next === null) return match;
    found(rule.name);
    return next;
  });
}
