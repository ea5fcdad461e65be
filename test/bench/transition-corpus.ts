/**
 * Labelled data for the transition benchmark: traffic built from real OpenAPI descriptions
 * (GitHub's and Stripe's, test/fixtures/openapi/) with synthetic ids, and records
 * whose every field is labelled PII or not, generated with @faker-js/faker.
 */
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { faker } from '@faker-js/faker';
import type { TrafficRecord } from '../../kernel/domain/index.js';
import { Refs } from '../../plugins/importers/openapi/refs.js';
import { sampleOf } from '../../plugins/importers/openapi/sample.js';

const fixture = (name: string) => new URL(`../../../test/fixtures/openapi/${name}`, import.meta.url).pathname;

/** The descriptions, by name: gzipped JSON under test/fixtures/openapi/ (see its README). */
export const DESCRIPTIONS = { GitHub: fixture('github-api.json.gz'), Stripe: fixture('stripe-api.json.gz') } as const;

interface Operation {
  parameters?: Parameter[];
  responses?: Record<string, unknown>;
}
interface OpenApi {
  paths: Record<string, Record<string, Operation | Parameter[] | undefined>>;
  components?: { parameters?: Record<string, Parameter> };
}
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];
interface Parameter {
  $ref?: string;
  name?: string;
  in?: string;
  schema?: { type?: string; enum?: string[] };
}

function record(uri: string, i: number, body = '', method = 'GET', status = 200): TrafficRecord {
  const at = new Date(1.7e12 + i).toISOString();
  return { id: `tr_${i}`, tenant: 'bench', service_id: 'svc_bench', recorded_at: at, mode: 'LEARN', request: { method, uri, headers: {}, body: '' }, response: { status, headers: body ? { 'content-type': 'application/json' } : {}, body }, timings: { started_at: at, upstream_ms: 1, total_ms: 1 } };
}

/** Drops each object property with probability `p`: real responses of one endpoint differ in the optional fields they carry. */
function thin(value: unknown, p: number): unknown {
  if (Array.isArray(value)) return value.map((v) => thin(v, p));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(() => !faker.datatype.boolean(p))
      .map(([k, v]) => [k, thin(v, p)]),
  );
}

/** A response as the operation describes it: its first 2xx status and a sample of that response's JSON schema, thinned; an empty body when it has none. */
function responseOf(op: Operation, refs: Refs): { status: number; body: string } {
  const code = Object.keys(op.responses ?? {}).find((c) => /^2\d\d$/.test(c)) ?? '200';
  const response = refs.object(op.responses?.[code] ?? {}, 'response');
  const media = (response?.content as Record<string, { schema?: unknown }> | undefined)?.['application/json'];
  if (!media?.schema) return { status: Number(code), body: '' };
  const value = sampleOf(media.schema, refs, 'schema', { perSample: 5_000, total: Infinity, truncated: false });
  return { status: Number(code), body: value === undefined ? '' : JSON.stringify(thin(value, 0.1)) };
}

/** A path parameter's value: an integer, an enum member, a hex sha, a UUID, a Stripe-style prefixed id, or a slug/name. */
function valueFor(name: string, schema: Parameter['schema'], prefixed: boolean): string {
  if (schema?.enum?.length) return faker.helpers.arrayElement(schema.enum);
  if (schema?.type === 'integer' || schema?.type === 'number') return String(faker.number.int({ min: 1, max: 10_000_000 }));
  if (/sha|hash/.test(name)) return faker.string.hexadecimal({ length: 40, casing: 'lower', prefix: '' });
  if (/(^|_)id$/.test(name)) return faker.string.uuid();
  if (prefixed) return `${name.slice(0, 3)}_${faker.string.alphanumeric(14)}`;
  return faker.helpers.arrayElement([() => faker.internet.username().toLowerCase(), () => faker.lorem.slug(2)])();
}

/**
 * `perTemplate` requests for every path template of a description whose parameters are whole
 * segments, each with fresh synthetic values, a method drawn from the path's operations and the
 * response that operation describes (a sample of its first 2xx JSON schema, each property kept
 * with probability 0.9); the truth is the description's template.
 */
export function templateTraffic(file: string, perTemplate: number, seed = 42): { records: TrafficRecord[]; truth: string[] } {
  faker.seed(seed);
  const doc = JSON.parse(gunzipSync(readFileSync(file)).toString('utf8')) as OpenApi;
  const prefixed = file.includes('stripe');
  const refs = new Refs(doc);
  const resolve = (p: Parameter): Parameter => (p.$ref ? (doc.components?.parameters?.[p.$ref.split('/').pop()!] ?? p) : p);
  const records: TrafficRecord[] = [];
  const truth: string[] = [];
  for (const [template, item] of Object.entries(doc.paths)) {
    if (!template.split('/').every((s) => !s.includes('{') || /^\{[^}]+\}$/.test(s))) continue;
    const params = new Map<string, Parameter['schema']>();
    for (const op of [item, ...Object.values(item)]) {
      const list = Array.isArray(op) ? op : ((op as { parameters?: Parameter[] } | undefined)?.parameters ?? []);
      for (const p of list.map(resolve)) if (p.in === 'path' && p.name) params.set(p.name, p.schema);
    }
    const ops = METHODS.filter((m) => item[m] && !Array.isArray(item[m]));
    for (let k = 0; k < perTemplate; k++) {
      const uri = template.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(valueFor(name, params.get(name), prefixed)));
      const method = faker.helpers.arrayElement(ops);
      const { status, body } = responseOf(item[method] as Operation, refs);
      records.push(record(uri, records.length, body, method.toUpperCase(), status));
      truth.push(template);
    }
  }
  return { records, truth };
}

/** A labelled field value: PII (with its kind) or not. */
export interface Labelled {
  kind: string;
  pii: boolean;
  value: string;
}

const SSN = () => `${faker.number.int({ min: 1, max: 665 }).toString().padStart(3, '0')}-${faker.number.int({ min: 1, max: 99 }).toString().padStart(2, '0')}-${faker.number.int({ min: 1, max: 9999 }).toString().padStart(4, '0')}`;
const PHONE = () => faker.phone.number({ style: faker.helpers.arrayElement(['human', 'national', 'international'] as const) });

/**
 * `n` records of customers, orders and support notes: every field labelled. PII is in fields
 * named for it and inside free text; the rest is what such payloads also carry (products,
 * cities, ids, dates, amounts, versions, user agents, URLs).
 */
export function piiCorpus(n: number, seed = 7): { records: TrafficRecord[]; fields: { record: number; path: string[]; label: Labelled; inText: boolean }[] } {
  faker.seed(seed);
  const records: TrafficRecord[] = [];
  const fields: { record: number; path: string[]; label: Labelled; inText: boolean }[] = [];
  for (let i = 0; i < n; i++) {
    const pii = (kind: string, value: string): Labelled => ({ kind, pii: true, value });
    const not = (kind: string, value: string): Labelled => ({ kind, pii: false, value });
    const customer: Record<string, Labelled> = {
      first_name: pii('name', faker.person.firstName()),
      last_name: pii('name', faker.person.lastName()),
      name: pii('name', faker.person.fullName()),
      email: pii('email', faker.internet.email()),
      phone: pii('phone', PHONE()),
      ssn: pii('national_id', SSN()),
      dob: pii('birth_date', faker.date.birthdate().toISOString().slice(0, 10)),
      card: pii('card_number', faker.finance.creditCardNumber()),
      iban: pii('iban', faker.finance.iban({ formatted: faker.datatype.boolean() })),
      last_ip: pii('ip_address', faker.datatype.boolean() ? faker.internet.ipv4() : faker.internet.ipv6()),
      id: not('id', `cus_${faker.string.alphanumeric(14)}`),
      created_at: not('timestamp', faker.date.recent().toISOString()),
      currency: not('currency', faker.finance.currencyCode()),
      user_agent: not('user_agent', faker.internet.userAgent()),
      website: not('url', faker.internet.url()),
    };
    const address: Record<string, Labelled> = { line1: pii('street_address', faker.location.streetAddress()), postal_code: pii('postal_code', faker.location.zipCode()), city: not('city', faker.location.city()), country: not('country', faker.location.country()) };
    const product: Record<string, Labelled> = {
      name: not('product_name', faker.commerce.productName()),
      sku: not('sku', faker.string.alphanumeric(10).toUpperCase()),
      price: not('amount', faker.commerce.price()),
      description: not('text', faker.commerce.productDescription()),
      version: not('version', faker.system.semver()),
      order_id: not('id', faker.string.uuid()),
      quantity: not('integer', String(faker.number.int({ min: 1, max: 500 }))),
      status: not('word', faker.helpers.arrayElement(['paid', 'open', 'void', 'shipped'])),
      company: not('company', faker.company.name()),
      commit: not('sha', faker.git.commitSha()),
      gtin: not('barcode', faker.string.numeric(13)),
      build: not('version', `${faker.number.int(30)}.${faker.number.int(30)}.${faker.number.int(99)}.${faker.number.int(9999)}`),
      updated_ms: not('timestamp', String(faker.date.recent().getTime())),
      invoice: not('id', `INV-${faker.number.int({ min: 2000, max: 2030 })}-${faker.string.numeric(6)}`),
    };
    const noteParts = [pii('email', faker.internet.email()), pii('phone', faker.phone.number({ style: 'international' })), pii('card_number', faker.finance.creditCardNumber()), not('text', faker.lorem.sentence())];
    const note = `Customer wrote from ${noteParts[0]!.value}, call back on ${noteParts[1]!.value}; paid with ${noteParts[2]!.value}. ${noteParts[3]!.value}`;
    const plain = (o: Record<string, Labelled>) => Object.fromEntries(Object.entries(o).map(([k, l]) => [k, l.value]));
    const body = JSON.stringify({ object: 'order', customer: { ...plain(customer), address: plain(address) }, product: plain(product), note });
    records.push(record(`/v1/orders/ord_${faker.string.alphanumeric(12)}`, i, body));
    for (const [k, l] of Object.entries(customer)) fields.push({ record: i, path: ['customer', k], label: l, inText: false });
    for (const [k, l] of Object.entries(address)) fields.push({ record: i, path: ['customer', 'address', k], label: l, inText: false });
    for (const [k, l] of Object.entries(product)) fields.push({ record: i, path: ['product', k], label: l, inText: false });
    for (const l of noteParts) fields.push({ record: i, path: ['note'], label: l, inText: true });
  }
  return { records, fields };
}
