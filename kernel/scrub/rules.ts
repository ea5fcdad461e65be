import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { MAX_PATTERN_PROGRAM, tenantPatternProblem } from './tenant-pattern.js';

/** What a rule does to the value under a key: a keyed pseudonym, a fixed marker, or nothing. @public */
export const KEY_ACTIONS = ['pseudonymize', 'redact', 'keep'] as const;

const RuleName = Type.String({ pattern: '^[a-z][a-z0-9_]{0,63}$' });
const Disable = Type.Array(RuleName, { maxItems: 64, description: 'Built-in rules switched off, by name (GET /v1/scrub/config lists them).' });
const KeyName = Type.String({ minLength: 1, maxLength: 128 });
const KeyAction = Type.Union(KEY_ACTIONS.map((a) => Type.Literal(a)));
const PatternSource = Type.String({ minLength: 1, maxLength: 256 });
const ServiceKey = Type.String({ pattern: '^(\\*|[A-Za-z0-9_-]{1,64})$' });

/** One service's rules (or `*`'s, applied to every service), as tenant config `scrub_rules` holds them. @public */
export const ServiceScrubRulesSchema = Type.Object(
  {
    disable: Type.Optional(Disable),
    keys: Type.Optional(
      Type.Record(KeyName, KeyAction, {
        description: 'JSON keys, header names and query parameters (any case) whose values are pseudonymized, redacted, or kept untouched by every rule.',
      }),
    ),
    patterns: Type.Optional(
      Type.Record(RuleName, PatternSource, {
        description:
          'Named regular expressions (RE2 syntax: no lookaround or backreferences, so every one runs in linear time); every match anywhere (path, query, headers, bodies, JSON keys) is pseudonymized, e.g. {"customer_id": "cus_[A-Za-z0-9]{6,}"}.',
      }),
    ),
  },
  { additionalProperties: false },
);

/** Tenant config `scrub_rules`: rules by service id, `*` for every service. @public */
export const ScrubRulesConfigSchema = Type.Record(ServiceKey, ServiceScrubRulesSchema);

export type ServiceScrubRules = Static<typeof ServiceScrubRulesSchema>;
export type ScrubRulesConfig = Static<typeof ScrubRulesConfigSchema>;

/** The rules in force for one service: `*` merged with its own (its own win). @public */
export interface ScrubRules {
  disable: string[];
  /** Lower-case key → action. */
  keys: Record<string, (typeof KEY_ACTIONS)[number]>;
  patterns: Record<string, string>;
}

/** `*`'s rules merged with the service's. @public */
export function effectiveScrubRules(config: ScrubRulesConfig, serviceId: string | null): ScrubRules {
  const layers = [config['*'], serviceId === null ? undefined : config[serviceId]].filter((l): l is ServiceScrubRules => l !== undefined);
  const rules: ScrubRules = { disable: [], keys: {}, patterns: {} };
  for (const layer of layers) {
    for (const name of layer.disable ?? []) if (!rules.disable.includes(name)) rules.disable.push(name);
    for (const [key, action] of Object.entries(layer.keys ?? {})) rules.keys[key.toLowerCase()] = action;
    Object.assign(rules.patterns, layer.patterns);
  }
  return rules;
}

/** Why a `scrub_rules` value cannot be used (a pattern RE2 does not compile, or one matching the empty string), or null. @public */
export function scrubRulesProblem(config: ScrubRulesConfig): string | null {
  for (const [service, layer] of Object.entries(config)) {
    for (const [name, source] of Object.entries(layer.patterns ?? {})) {
      const problem = tenantPatternProblem(source);
      if (problem) return `${service}.patterns.${name}: ${problem}`;
    }
  }
  return null;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The usable part of a stored `scrub_rules` value (it was valid when written; the schema or the
 * pattern engine may have changed since, or the row was written by hand), and what was left out.
 * Every entry that is still valid is kept (a broken pattern does not take the service's
 * `redact` keys with it); each problem names where, never a value.
 * @public
 */
export function usableScrubRules(value: unknown): { rules: ScrubRulesConfig; problems: string[] } {
  const problems: string[] = [];
  if (!isRecord(value)) return { rules: {}, problems: ['scrub_rules is not an object of rules by service id; all of it is ignored'] };
  const rules: ScrubRulesConfig = {};
  for (const [service, layer] of Object.entries(value)) {
    if (!Value.Check(ServiceKey, service)) {
      problems.push('a layer whose key is not a service id or * is ignored');
      continue;
    }
    if (!isRecord(layer)) {
      problems.push(`${service}: not an object of rules; ignored`);
      continue;
    }
    const kept: ServiceScrubRules = {};
    for (const field of Object.keys(layer)) if (!['disable', 'keys', 'patterns'].includes(field)) problems.push(`${service}: an unknown field is ignored`);
    if (layer.disable !== undefined) {
      if (Value.Check(Disable, layer.disable)) kept.disable = layer.disable;
      else problems.push(`${service}.disable: not a list of rule names; ignored (every rule applies)`);
    }
    if (layer.keys !== undefined) {
      if (!isRecord(layer.keys)) problems.push(`${service}.keys: not an object of key → action; ignored`);
      else {
        const keys = Object.entries(layer.keys).filter(([k, a]) => Value.Check(KeyName, k) && Value.Check(KeyAction, a));
        const left = Object.keys(layer.keys).length - keys.length;
        if (left) problems.push(`${service}.keys: ${left} ${left === 1 ? 'entry' : 'entries'} not a key name → pseudonymize | redact | keep, ignored`);
        if (keys.length) kept.keys = Object.fromEntries(keys) as ServiceScrubRules['keys'];
      }
    }
    if (layer.patterns !== undefined) {
      const patterns: [string, string][] = [];
      if (!isRecord(layer.patterns)) problems.push(`${service}.patterns: not an object; ignored`);
      else
        for (const [name, source] of Object.entries(layer.patterns)) {
          if (!Value.Check(RuleName, name)) problems.push(`${service}.patterns: a pattern whose name is not a rule name is ignored`);
          else if (!Value.Check(PatternSource, source)) problems.push(`${service}.patterns.${name}: not a string of 1 to 256 characters; ignored`);
          else if (tenantPatternProblem(source)) problems.push(`${service}.patterns.${name}: no longer a pattern the service runs (RE2 syntax, a program of at most ${MAX_PATTERN_PROGRAM} instructions, not matching the empty string); ignored`);
          else patterns.push([name, source]);
        }
      if (patterns.length) kept.patterns = Object.fromEntries(patterns);
    }
    rules[service] = kept;
  }
  return { rules, problems };
}
