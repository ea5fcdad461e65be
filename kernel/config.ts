import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import path from 'node:path';
import { AppError } from './errors.js';
import { ScrubRulesConfigSchema, scrubRulesProblem, usableScrubRules, type ScrubRulesConfig } from './scrub/rules.js';

/** Process settings, read once from the environment at start. @public */
export interface ProcessConfig {
  host: string;
  port: number;
  agentPort: number;
  databaseUrl: string | undefined;
  dataDir: string;
  licenseKey: string | undefined;
  licensePublicKey: string | undefined;
  bootstrapApiKey: string | undefined;
  plugins: string[];
  trustProxy: boolean;
  allowLocalReplay: boolean;
  webhookMaxBytes: number;
  logLevel: string;
  workers: number;
  /** How often the background health refresher probes dependencies, in ms. */
  healthRefreshMs: number;
  /** Where the control plane reaches the agent's probe. */
  agentUrl: string;
  /** Inference server base URL; unset = not configured. */
  inferenceUrl: string | undefined;
  /** Per-minute limits that replace SPEC's defaults, by bucket name. */
  rateLimits: Record<string, number>;
}

/** One environment variable the service reads, with its default and meaning (the README table is built from this). @public */
export interface EnvVar {
  name: string;
  default: string;
  meaning: string;
}

/** Every environment variable, in one place. @public */
export const ENV_VARS: readonly EnvVar[] = [
  { name: 'HOST', default: '127.0.0.1', meaning: 'Bind address of both listeners.' },
  { name: 'PORT', default: '8000', meaning: 'Control-plane API port.' },
  { name: 'AGENT_PORT', default: '8080', meaning: 'Agent (data plane) port.' },
  { name: 'DATABASE_URL', default: '(unset: embedded PGlite)', meaning: 'postgres://… selects PostgreSQL.' },
  { name: 'SERVICE_DATA_DIR', default: './data', meaning: 'Data volume: PGlite files, traffic and webhook JSONL, adapters.' },
  { name: 'SERVICE_LICENSE_KEY', default: '(unset: tenant default, tier free)', meaning: 'Signed licence carrying tenant, tier and expiry.' },
  { name: 'SERVICE_LICENSE_PUBLIC_KEY', default: '(unset)', meaning: 'Ed25519 public key (PEM, or a path to a PEM file) that verifies the licence.' },
  { name: 'SERVICE_BOOTSTRAP_API_KEY', default: '(unset)', meaning: 'A usk_… key registered at start if not yet known.' },
  { name: 'SERVICE_PLUGINS', default: '(unset)', meaning: 'Comma-separated npm package names or paths of external plugins.' },
  { name: 'SERVICE_TRUST_PROXY', default: '0', meaning: '1 = take the client IP from X-Forwarded-For (rate limits).' },
  { name: 'SERVICE_ALLOW_LOCAL_REPLAY', default: '0', meaning: '1 = webhook replay may target loopback and private addresses.' },
  { name: 'SERVICE_WEBHOOK_MAX_BYTES', default: '26214400', meaning: 'Largest webhook body the agent captures (25 MiB).' },
  { name: 'SERVICE_WORKERS', default: '(number of cores)', meaning: 'Size of the worker pool for CPU-heavy pipeline stages.' },
  { name: 'LOG_LEVEL', default: 'info', meaning: 'pino log level (fatal, error, warn, info, debug, trace, silent).' },
  { name: 'SERVICE_AGENT_URL', default: 'http://HOST:AGENT_PORT', meaning: 'Where the control plane reaches the agent probe (set it when they run apart).' },
  { name: 'SERVICE_INFERENCE_URL', default: '(unset: not configured)', meaning: 'Inference server base URL, probed by /health.' },
  { name: 'SERVICE_RATE_LIMITS', default: '(SPEC limits)', meaning: 'Overrides per minute, e.g. global=6000,transition_start=10 (load tests).' },
  { name: 'SERVICE_HEALTH_REFRESH_MS', default: '5000', meaning: 'Refresh interval of the cached health summary.' },
];

function intFrom(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new Error(`${name}=${raw} is not a whole number from ${min} to ${max}. Fix the variable or unset it.`);
  }
  return n;
}

function flag(env: NodeJS.ProcessEnv, name: string): boolean {
  const raw = (env[name] ?? '').trim().toLowerCase();
  return raw === '1' || raw === 'true' || raw === 'yes';
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}

/**
 * Reads and validates process settings. Throws an Error whose message says which variable is
 * wrong and how to fix it.
 * @public
 */
export function loadProcessConfig(env: NodeJS.ProcessEnv = process.env): ProcessConfig {
  return {
    host: nonEmpty(env.HOST) ?? '127.0.0.1',
    port: intFrom(env, 'PORT', 8000, 0, 65535),
    agentPort: intFrom(env, 'AGENT_PORT', 8080, 0, 65535),
    databaseUrl: nonEmpty(env.DATABASE_URL),
    dataDir: path.resolve(nonEmpty(env.SERVICE_DATA_DIR) ?? './data'),
    licenseKey: nonEmpty(env.SERVICE_LICENSE_KEY),
    licensePublicKey: nonEmpty(env.SERVICE_LICENSE_PUBLIC_KEY),
    bootstrapApiKey: nonEmpty(env.SERVICE_BOOTSTRAP_API_KEY),
    plugins: (env.SERVICE_PLUGINS ?? '').split(',').map((s) => s.trim()).filter(Boolean),
    trustProxy: flag(env, 'SERVICE_TRUST_PROXY'),
    allowLocalReplay: flag(env, 'SERVICE_ALLOW_LOCAL_REPLAY'),
    webhookMaxBytes: intFrom(env, 'SERVICE_WEBHOOK_MAX_BYTES', 25 * 1024 * 1024, 1, 1024 * 1024 * 1024),
    logLevel: nonEmpty(env.LOG_LEVEL) ?? 'info',
    workers: intFrom(env, 'SERVICE_WORKERS', 0, 0, 256),
    healthRefreshMs: intFrom(env, 'SERVICE_HEALTH_REFRESH_MS', 5000, 100, 600000),
    agentUrl: (nonEmpty(env.SERVICE_AGENT_URL) ?? `http://${hostForUrl(nonEmpty(env.HOST) ?? '127.0.0.1')}:${intFrom(env, 'AGENT_PORT', 8080, 0, 65535)}`).replace(/\/+$/, ''),
    inferenceUrl: nonEmpty(env.SERVICE_INFERENCE_URL),
    rateLimits: parseRateLimits(env.SERVICE_RATE_LIMITS ?? ''),
  };
}

/** How to reach a bind address in a URL: a wildcard is reached on loopback; IPv6 needs brackets. @public */
export function hostForUrl(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

function parseRateLimits(raw: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const part of raw.split(',').map((s) => s.trim()).filter(Boolean)) {
    const m = /^([a-z_]+)=(\d{1,9})$/.exec(part);
    if (!m || Number(m[2]) < 1) throw new Error(`SERVICE_RATE_LIMITS entry '${part}' must look like bucket=N with N ≥ 1, e.g. global=6000.`);
    out[m[1]!] = Number(m[2]);
  }
  return out;
}

/** A tenant-overridable setting: its schema, default and meaning. @public */
export interface TenantSetting<S extends TSchema = TSchema> {
  schema: S;
  default: Static<S>;
  description: string;
  /** What the schema cannot say is wrong with a value (a pattern that does not compile), or null. */
  check?: (value: never) => string | null;
  /**
   * The usable part of a stored value that is no longer valid, and what was left out (no values);
   * without it, such a value gives way to the default.
   */
  usable?: (value: unknown) => { value: unknown; problems: string[] };
}

/**
 * Settings a tenant may override with `PUT /config/{key}`. `GET /config` answers these defaults
 * merged with the tenant's overrides.
 * @public
 */
export const TENANT_SETTINGS = {
  require_scrubbing: {
    schema: Type.Boolean(),
    default: false,
    description: 'When true, unscrubbed export is refused with 409 scrubbing_required.',
  },
  traffic_retention_days: {
    schema: Type.Integer({ minimum: 1, maximum: 3650 }),
    default: 30,
    description: 'Days recorded traffic is kept in the database.',
  },
  record_max_body_bytes: {
    schema: Type.Integer({ minimum: 0, maximum: 100 * 1024 * 1024 }),
    default: 20 * 1024 * 1024,
    description: 'Largest request or response body the agent records byte-exact.',
  },
  mock_latency_ms: {
    schema: Type.Integer({ minimum: 0, maximum: 60000 }),
    default: 0,
    description: 'Delay the agent adds before answering from the mock library.',
  },
  scrub_rules: {
    schema: ScrubRulesConfigSchema,
    default: {} as ScrubRulesConfig,
    description:
      'Per-service scrub rules, keyed by service id (`*` for every service): {disable: [rule names], keys: {key: "pseudonymize"|"redact"|"keep"}, patterns: {name: regex}}. GET /v1/scrub/config lists the rules.',
    check: scrubRulesProblem,
    usable: (value: unknown) => {
      const { rules, problems } = usableScrubRules(value);
      return { value: rules, problems };
    },
  },
} satisfies Record<string, TenantSetting>;

/** The name of a tenant-overridable setting. @public */
export type TenantSettingKey = keyof typeof TENANT_SETTINGS;

/** True when `key` names a tenant setting. @public */
export function isTenantSettingKey(key: string): key is TenantSettingKey {
  return Object.hasOwn(TENANT_SETTINGS, key);
}

/**
 * Checks a value for a tenant setting and returns it, or throws 422 `validation_error` naming
 * the key and what is wrong.
 * @public
 */
export function validateTenantSetting(key: string, value: unknown): unknown {
  if (!isTenantSettingKey(key)) {
    throw new AppError('validation_error', `unknown config key '${key}'; known keys: ${Object.keys(TENANT_SETTINGS).join(', ')}`);
  }
  const setting: TenantSetting = TENANT_SETTINGS[key];
  if (!Value.Check(setting.schema, value)) {
    const first = Value.Errors(setting.schema, value).First();
    throw new AppError('validation_error', `config '${key}': ${first ? `${first.path || 'value'} ${first.message}` : 'invalid value'}`);
  }
  const problem = setting.check?.(value as never) ?? null;
  if (problem) throw new AppError('validation_error', `config '${key}': ${problem}`);
  return value;
}

/**
 * Defaults merged with a tenant's stored overrides, each checked again as it is read: a stored
 * value that is no longer valid (the schema or the pattern engine changed since, or the row was
 * written by hand) gives way to its usable part (`scrub_rules`: every entry still valid) or to
 * the default, and `problems` says what was left out, naming where and never a value.
 * @public
 */
export function checkedTenantConfig(overrides: Record<string, unknown>): { config: Record<string, unknown>; problems: string[] } {
  const config: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [key, setting] of Object.entries(TENANT_SETTINGS) as [string, TenantSetting][]) {
    if (!Object.hasOwn(overrides, key)) {
      config[key] = setting.default;
      continue;
    }
    const value = overrides[key];
    if (Value.Check(setting.schema, value) && !setting.check?.(value as never)) {
      config[key] = value;
    } else if (setting.usable) {
      const usable = setting.usable(value);
      config[key] = usable.value;
      problems.push(...usable.problems.map((p) => `${key}: ${p}`));
    } else {
      config[key] = setting.default;
      problems.push(`${key}: the stored value is not valid; the default is used`);
    }
  }
  return { config, problems };
}

/** Defaults merged with a tenant's overrides, checked as {@link checkedTenantConfig} does. @public */
export function mergeTenantConfig(overrides: Record<string, unknown>): Record<string, unknown> {
  return checkedTenantConfig(overrides).config;
}
