import { Type } from '@sinclair/typebox';
import { checkedTenantConfig } from '../../../kernel/config.js';
import { scrubWithAll, type Scrubber } from '../../../kernel/contracts/scrubber.js';
import type { RecordedHeaders, TrafficRecord } from '../../../kernel/domain/index.js';
import { AppError } from '../../../kernel/errors.js';
import { checkNesting, MAX_NESTING } from '../../../kernel/import-kit.js';
import { effectiveScrubRules, type ScrubRulesConfig } from '../../../kernel/scrub/rules.js';
import { loadScrubContext } from '../../../pipelines/scrub-context.js';
import { defineRoute, type RouteSpec } from '../route.js';
import { Id } from '../schema.js';

const Headers = Type.Record(Type.String({ minLength: 1, maxLength: 256 }), Type.Union([Type.String(), Type.Array(Type.String())]));
const RulesSchema = Type.Object({ disable: Type.Array(Type.String()), keys: Type.Record(Type.String(), Type.String()), patterns: Type.Record(Type.String(), Type.String()) });

/** Largest `POST /v1/scrub/test` body: a dry run scrubs on the control plane's own thread. */
const SCRUB_TEST_BODY_LIMIT = 1024 * 1024;

/** `GET /v1/scrub/config` and `POST /v1/scrub/test`. */
export const scrubRoutes: RouteSpec[] = [
  defineRoute({
    method: 'GET',
    path: '/v1/scrub/config',
    summary: 'Scrub rules: every rule the scrubbers apply, and the rules in force per service (change them with PUT /config/scrub_rules)',
    tag: 'scrub',
    responses: {
      200: {
        description: 'Rules and per-service settings',
        schema: Type.Object({
          rules: Type.Array(Type.Object({ name: Type.String(), category: Type.String(), plugin: Type.String(), description: Type.String() })),
          scrub_rules: Type.Record(Type.String(), Type.Unknown(), { description: 'The tenant setting in force: rules by service id, `*` for all (what is stored, less any part no longer valid).' }),
          problems: Type.Array(Type.String(), { description: 'Parts of the stored setting left out because they are no longer valid (where and why, never a value); empty when all of it is in force.' }),
          services: Type.Array(Type.Object({ service_id: Type.String(), name: Type.String(), rules: RulesSchema, enabled: Type.Array(Type.String()) })),
        }),
      },
    },
    async handler({ cradle, tenant }) {
      const rules = cradle.kernel.plugins.ofKind('scrubber').flatMap((p) => p.instance.rules.map((r) => ({ ...r, plugin: p.descriptor.name })));
      const { config, problems } = checkedTenantConfig(await cradle.tenantConfig.overrides(tenant));
      const scrubRules = config.scrub_rules as ScrubRulesConfig;
      const services = (await cradle.servicesCache.get(tenant)).map((s) => {
        const inForce = effectiveScrubRules(scrubRules, s.id);
        return { service_id: s.id, name: s.name, rules: inForce, enabled: rules.map((r) => r.name).filter((n) => !inForce.disable.includes(n)) };
      });
      return { body: { rules, scrub_rules: scrubRules, problems: problems.filter((p) => p.startsWith('scrub_rules:')), services } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/scrub/test',
    summary: 'Dry-run a payload through the scrubbers, as a transition scrubs, with the service’s rules; nothing is stored',
    tag: 'scrub',
    // A dry run changes nothing, so it stays open while TRANSITIONING and leaves no activity.
    allowWhileTransitioning: true,
    noActivity: true,
    bodyLimit: SCRUB_TEST_BODY_LIMIT,
    body: Type.Object(
      {
        service_id: Type.Optional(Id),
        uri: Type.Optional(Type.String({ pattern: '^/', maxLength: 8192, description: 'Path and query, e.g. /v1/users/jane@example.com?api_key=…' })),
        headers: Type.Optional(Headers),
        body: Type.Optional(
          Type.Unknown({
            description: 'A JSON value, scrubbed as a JSON body (its content-type is application/json whatever `headers` say; at most 100 levels deep), or a string, scrubbed as text, or as JSON or a form when `headers` say so.',
          }),
        ),
      },
      { additionalProperties: false },
    ),
    responses: {
      200: {
        description: 'The payload as a transition would keep it, and what was found where (never the values); an `unscrubbable_body` finding says the body could not be (wholly) scrubbed',
        schema: Type.Object({ uri: Type.String(), headers: Headers, body: Type.Unknown(), findings: Type.Array(Type.Object({ path: Type.String(), rule: Type.String() })) }),
      },
    },
    async handler({ cradle, body }) {
      if (body.service_id) await cradle.services.get(cradle.tenant, body.service_id);
      const isValue = body.body !== undefined && typeof body.body !== 'string';
      // JSON.stringify recurses: a deeper value is refused (422) before it gets there. The detail
      // names no key: keys of the payload may be the very values it is testing.
      if (isValue && !nestsWithin(body.body)) throw new AppError('validation_error', `body: nests deeper than ${MAX_NESTING} levels; send it as a string to see it scrubbed as text`);
      const context = await loadScrubContext(cradle, cradle.tenant, body.service_id ?? null);
      const headers: RecordedHeaders = Object.fromEntries(Object.entries(body.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
      if (isValue) headers['content-type'] = 'application/json';
      const record: TrafficRecord = {
        id: 'tr_dry_run',
        tenant: cradle.tenant,
        service_id: body.service_id ?? 'dry_run',
        recorded_at: new Date().toISOString(),
        mode: 'LEARN',
        request: { method: 'POST', uri: body.uri ?? '/', headers, body: body.body === undefined ? '' : isValue ? JSON.stringify(body.body) : (body.body as string) },
        response: null,
        timings: { started_at: new Date().toISOString(), upstream_ms: null, total_ms: 0 },
      };
      // The transition's own scrub step: every booted scrubber in one walk of the record.
      const scrubbers = cradle.kernel.plugins.ofKind('scrubber').map((p) => p.instance as Scrubber);
      const [out] = scrubWithAll(scrubbers, [record], context);
      const request = out!.request;
      const text = typeof request.body === 'string' ? request.body : '';
      return {
        body: {
          uri: request.uri,
          headers: request.headers,
          body: isValue ? parsedOr(text) : body.body === undefined ? '' : request.body,
          findings: (out!.scrub_findings ?? []).map((f) => ({ path: f.path.replace(/^request\./, ''), rule: f.rule })),
        },
      };
    },
  }),
];

/** True when a JSON value nests at most MAX_NESTING levels deep. */
function nestsWithin(value: unknown): boolean {
  try {
    checkNesting(value);
    return true;
  } catch {
    return false;
  }
}

/** A scrubbed JSON body as a value; as text when scrubbing left it no longer JSON. */
function parsedOr(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
