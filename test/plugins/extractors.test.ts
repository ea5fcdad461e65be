import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mergeSchemas, inferSchema } from '../../plugins/extractors/patterns/json-schema.js';
import patterns from '../../plugins/extractors/patterns/index.js';
import { keyPaths } from '../../plugins/extractors/uri-templates/body-keys.js';
import uriTemplates from '../../plugins/extractors/uri-templates/index.js';
import { inferTemplates, singular, type PathSample } from '../../plugins/extractors/uri-templates/infer.js';
import { pathSegments, segmentShape } from '../../plugins/extractors/uri-templates/shapes.js';
import type { PatternExtractor, TemplateExtractor } from '../../kernel/contracts/index.js';
import { trafficRecord } from '../helpers/traffic.js';

const templatesOf = (paths: string[]) => inferTemplates(paths.map((p) => ({ segments: pathSegments(p), shapes: pathSegments(p).map(segmentShape) })));
const unique = (paths: string[]) => [...new Set(templatesOf(paths))].sort();

/** A request and the JSON body it was answered (none for `null`). */
type Exchange = [method: string, path: string, body: unknown];
const sampleOf = ([method, path, body]: Exchange): PathSample => ({ segments: pathSegments(path), shapes: pathSegments(path).map(segmentShape), method, status: body === null ? 204 : 200, body: body === null ? null : keyPaths(body) });
const answered = (exchanges: Exchange[]) => [...new Set(inferTemplates(exchanges.map(sampleOf)))].sort();
const names = ['octocat', 'torvalds', 'gaearon', 'sindresorhus', 'tj', 'addy', 'yyx', 'mojombo', 'defunkt', 'pjhyett', 'wycats', 'ezmobius'];
const pkg = (name: string) => ({ id: 1, name, package_type: 'npm', owner: { login: 'o' }, visibility: 'public', url: 'u', created_at: 't', updated_at: 't', version_count: 3 });
const version = { id: 7, name: '1.0.0', url: 'u', package_html_url: 'h', created_at: 't', updated_at: 't', metadata: {} };
/** Packages by type, `/orgs/acme/packages/{type}/{name}` and its versions: 8 requests a type, each for another package. */
const packages = (types: string[], answer: (type: string, name: string) => unknown = (_, n) => pkg(n)) =>
  types.flatMap((type, t) =>
    names.slice(0, 8).map((name, i): Exchange => {
      const at = `/orgs/acme/packages/${type}/${name}${t}`;
      return [
        ['GET', at, answer(type, name)],
        ['GET', `${at}/versions`, [version]],
        ['GET', `${at}/versions/${100 + i}`, version],
        ['DELETE', at, null],
      ][i % 4] as Exchange;
    }),
  );

describe('URI templates', () => {
  it('tells ids by shape: numbers, UUIDs, ULIDs, hex, prefixed ids, tokens, e-mails; words stay', () => {
    for (const id of ['42', '8f14e45f-ceea-467f-a0e1-3c1e7a1d2b9c', '01ARZ3NDEKTSV4RRFFQ69G5FAV', '9f86d081884c7d65', 'cus_9s8d7f', 'aB3dE5fG7hJ9kL1m', 'jane@example.com']) {
      assert.ok(segmentShape(id), id);
    }
    for (const word of ['customers', 'gpg_keys', 'check-runs', 'v1', 'decade', 'payment_intents']) assert.equal(segmentShape(word), null, word);
    assert.deepEqual(unique(['/v1/customers/cus_9s8d7f', '/v1/customers/cus_8a7b6c/sources']), ['/v1/customers/{customer_id}', '/v1/customers/{customer_id}/sources']);
    assert.deepEqual(unique(['/users/jane@example.com']), ['/users/{email}']);
  });

  it('tells word-shaped ids by cardinality: many rarely-repeated values under a collection', () => {
    const users = ['octocat', 'torvalds', 'gaearon', 'sindresorhus', 'tj'].flatMap((u) => [`/users/${u}`, `/users/${u}/repos`]);
    const literals = Array.from({ length: 5 }, () => ['/user/emails', '/user/keys', '/user/repos']).flat();
    assert.deepEqual(unique([...users, ...literals]), ['/user/emails', '/user/keys', '/user/repos', '/users/{user_id}', '/users/{user_id}/repos']);
    // A handful of names under the root, or under a singular segment, are endpoints, not ids.
    assert.deepEqual(unique(['/health', '/status', '/metrics']), ['/health', '/metrics', '/status']);
    // Under /repos/{owner}/{repo} the sub-resources recur across repositories: literals. A few
    // words under a parameter are sub-resources too, however rarely asked for.
    const repos = Array.from({ length: 12 }, (_, i) => `/repos/owner${String.fromCharCode(97 + i)}/repo${String.fromCharCode(97 + i)}x/${['issues', 'pulls', 'tags'][i % 3]}`);
    assert.deepEqual(unique(repos), ['/repos/{repo_id}/{id}/issues', '/repos/{repo_id}/{id}/pulls', '/repos/{repo_id}/{id}/tags']);
    assert.deepEqual(unique(['/customers/cus_1a2b3c/sources', '/customers/cus_4d5e6f/tax_ids', '/customers/cus_7g8h9i/balance']), ['/customers/{customer_id}/balance', '/customers/{customer_id}/sources', '/customers/{customer_id}/tax_ids']);
  });

  it('reads joined words with short numbers as words, not generated tokens', () => {
    for (const word of ['enterprise-28-day', 'organization-28-day', 'user-teams-1-day']) assert.equal(segmentShape(word), null, word);
    for (const token of ['aB3dE5fG7hJ9kL1m', 'x8f2k9q7w3e5r1t6']) assert.equal(segmentShape(token), 'token', token);
  });

  it('judges rarely asked-for values apart from names that recur beside them', () => {
    const members = names.slice(0, 10).map((u) => `/teams/core/memberships/${u}`);
    const verbs = Array.from({ length: 10 }, (_, i) => `/teams/core/memberships/${i % 2 ? 'add' : 'remove'}`);
    assert.deepEqual(unique([...members, ...verbs]), ['/teams/core/memberships/add', '/teams/core/memberships/remove', '/teams/core/memberships/{membership_id}']);
    // Id-shaped values at a position count towards "enough ids": 6 names and 2 numbers under a singular segment.
    assert.deepEqual(unique([...names.slice(0, 6).map((n) => `/schema/${n}`), '/schema/42', '/schema/77']), ['/schema/{schema_id}']);
    // Without them, 6 names under a singular segment stay names.
    assert.deepEqual(unique(names.slice(0, 6).map((n) => `/schema/${n}`)).length, 6);
  });

  it('keeps rarely asked-for names that answer different schemas as literals', () => {
    const often: Exchange[] = Array.from({ length: 30 }, (_, i): Exchange => ['GET', `/repos/acme/app/${i % 3 ? 'issues' : 'pulls'}`, [{ number: i, title: 't' }]]);
    const seldom = ['topics', 'languages', 'tags', 'teams', 'forks', 'hooks', 'keys', 'events', 'stargazers', 'subscribers'];
    const tail = seldom.map((name, i): Exchange => ['GET', `/repos/acme/app/${name}`, { [`${name}_${i}`]: [], [`count_${i}`]: 1, [`url_${i}`]: 'u' }]);
    assert.deepEqual(answered([...often, ...tail]).length, 12);
    // The same rare values answering one schema are ids; without bodies, cardinality alone decides.
    const alike = seldom.map((name): Exchange => ['GET', `/repos/acme/app/${name}`, { id: 1, name, owner: 'o' }]);
    assert.deepEqual(answered([...often, ...alike]), ['/repos/acme/app/issues', '/repos/acme/app/pulls', '/repos/acme/app/{app_id}']);
  });

  it('makes sibling names under a collection one parameter when their subtrees answer alike (an enum)', () => {
    assert.deepEqual(answered(packages(['npm', 'maven', 'docker', 'nuget'])), ['/orgs/acme/packages/{package_id}/{id}', '/orgs/acme/packages/{package_id}/{id}/versions', '/orgs/acme/packages/{package_id}/{id}/versions/{version_id}']);
    // The same through the plugin: key paths of the recorded bodies, computed per record.
    const x = uriTemplates.setup({ options: {} as never, get: () => undefined as never }) as TemplateExtractor;
    const records = packages(['npm', 'maven', 'docker']).map(([method, uri, body]) => trafficRecord({ method, uri, status: body === null ? 204 : 200, response: body === null ? { body: '' } : { body: body as object } }));
    assert.ok(x.extract(x.normalizeBatch!(records)).every((t) => t?.startsWith('/orgs/acme/packages/{package_id}/{id}')));
  });

  it('keeps sibling names apart when they answer differently, only in lists, under a non-collection, or are two', () => {
    const literal = (exchanges: Exchange[]) => answered(exchanges).filter((t) => t.includes('{package_id}'));
    // Different resources answer different schemas.
    const shapes: Record<string, (n: string) => unknown> = { npm: pkg, charges: (n) => ({ id: n, amount: 5, currency: 'usd', captured: true }), invoices: (n) => ({ number: n, total: 9, lines: [], due_date: 'd' }) };
    assert.deepEqual(literal(packages(Object.keys(shapes), (type, n) => shapes[type]!(n))), []);
    // Two alike are not enough: they could be two resources that look the same.
    assert.deepEqual(literal(packages(['npm', 'maven'])), []);
    // One of four answering differently stays a literal; the other three are one parameter.
    const odd = answered(packages(['npm', 'maven', 'docker', 'charges'], (type, n) => (type === 'charges' ? shapes.charges!(n) : pkg(n))));
    assert.ok(odd.includes('/orgs/acme/packages/charges/{charge_id}') && odd.includes('/orgs/acme/packages/{package_id}/{id}'), odd.join(' '));
    // Collections that list the same kind of thing, with nothing below them, stay apart.
    const lists = ['followers', 'following', 'stargazers', 'watchers'].flatMap((l) => Array.from({ length: 5 }, (): Exchange => ['GET', `/lists/${l}`, [{ login: 'o', id: 1, url: 'u' }]]));
    assert.deepEqual(answered(lists).length, 4);
    // Under a non-collection (the root, a version segment), resources that answer alike stay apart.
    const crud = ['customers', 'products', 'orders'].flatMap((c) => ['a1b2c3d4e5', 'f6a7b8c9d0'].map((id): Exchange => ['GET', `/v1/${c}/${id}`, { id, name: 'n', created_at: 't' }]));
    assert.deepEqual(answered(crud), ['/v1/customers/{customer_id}', '/v1/orders/{order_id}', '/v1/products/{product_id}']);
  });

  it('names parameters from the collection before them', () => {
    assert.deepEqual(['customers', 'companies', 'payment-intents', 'addresses', 'status', 'boxes', 'checkoutSessions'].map(singular), ['customer', 'company', 'payment_intent', 'address', 'status', 'box', 'checkout_session']);
  });
});

describe('patterns', () => {
  it('merges JSON Schemas: required only when always there, types as anyOf, formats when they agree', () => {
    const merged = mergeSchemas(inferSchema({ id: 1, email: 'a@b.co', tags: ['x'], when: '2024-01-05T10:00:00Z' }), inferSchema({ id: 2.5, tags: [], when: null }));
    assert.deepEqual(merged, {
      type: 'object',
      properties: {
        id: { type: 'number' },
        email: { type: 'string', format: 'email' },
        tags: { type: 'array', items: { type: 'string' } },
        when: { anyOf: [{ type: 'null' }, { type: 'string', format: 'date-time' }] },
      },
      required: ['id', 'tags', 'when'],
    });
  });

  it('finds query parameter types, presence and volatility per endpoint', async () => {
    const x = (await patterns.setup({ options: {} as never, get: () => undefined as never })) as PatternExtractor;
    const records = Array.from({ length: 6 }, (_, i) => trafficRecord({ uri: `/items?limit=10&status=${i % 2 ? 'open' : 'closed'}&_=${1700000000000 + i}${i === 0 ? '&debug=true' : ''}`, response: { body: { ok: true } } }));
    const [e] = x.extract(x.normalizeBatch!(records), records.map(() => '/items'));
    assert.deepEqual(e!.query, {
      _: { required: true, type: 'integer', distinct: 6, volatile: true },
      debug: { required: false, type: 'boolean', distinct: 1, volatile: false, values: ['true'] },
      limit: { required: true, type: 'integer', distinct: 1, volatile: false, values: ['10'] },
      status: { required: true, type: 'string', distinct: 2, volatile: false, values: ['closed', 'open'] },
    });
    assert.deepEqual(e!.response_schemas['200'], { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] });
  });
});
