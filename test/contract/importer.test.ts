import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { isAppError } from '../../kernel/errors.js';
import { isStatus, type Importer, type MockDraft } from '../../kernel/public.js';
import { bootImporters, fixture, readAll } from '../helpers/importers.js';

/** A real document each importer reads, and the media type it comes as. */
const SAMPLES: Record<string, { doc: () => Buffer; type: string }> = {
  har: { doc: () => fixture('har/shop.har'), type: 'application/json' },
  postman: { doc: () => fixture('postman/petstore-expanded-v2.1.json'), type: 'application/json' },
  openapi: { doc: () => fixture('openapi/petstore-expanded-3.0.yaml'), type: 'application/yaml' },
  wiremock: {
    doc: () => Buffer.from(JSON.stringify({ mappings: [{ request: { method: 'GET', urlPathTemplate: '/v1/customers/{id}' }, response: { status: 200, headers: { 'Content-Type': 'application/json' }, jsonBody: { id: 'cus_1' } } }] })),
    type: 'application/json',
  },
};

/** The law every draft obeys, whoever made it. */
function checkDraft(d: MockDraft, importer: Importer): void {
  assert.match(d.method, /^[A-Z]{1,16}$/);
  assert.ok(d.path.startsWith('/'), d.path);
  const template = d.uri_template ?? d.path;
  assert.ok(template.startsWith('/'), template);
  const t = template.split('/');
  const p = d.path.split('/');
  assert.equal(t.length, p.length, `${d.path} is a sample of ${template}`);
  t.forEach((seg, i) => assert.ok(/\{[^}]+\}/.test(seg) || seg === p[i], `${d.path} is a sample of ${template}`));
  assert.ok(isStatus(d.response.status));
  for (const name of Object.keys(d.response.headers)) assert.equal(name, name.toLowerCase());
  assert.ok(d.query === null || Object.values(d.query).every((v) => Array.isArray(v) && v.every((x) => typeof x === 'string')));
  assert.ok(typeof d.origin === 'string' && d.origin.length > 0);
  if (importer.binding === 'host') assert.ok(typeof d.host === 'string' && d.host.length > 0, 'host-bound importers name the host');
}

async function rejects422(run: () => Promise<unknown>): Promise<string> {
  try {
    await run();
  } catch (err) {
    assert.ok(isAppError(err), `a plain ${(err as Error).name}: ${(err as Error).message}`);
    assert.equal(err.code, 'validation_error');
    return err.message;
  }
  assert.fail('expected a 422');
}

describe('contract: every importer (built-in and external)', () => {
  let importers: Map<string, Importer>;
  let close: () => Promise<void>;
  before(async () => ({ importers, close } = await bootImporters()));
  after(() => close());

  it('boots the three built-ins and the SERVICE_PLUGINS one', () => {
    assert.deepEqual([...importers.keys()].sort(), ['har', 'openapi', 'postman', 'wiremock']);
  });

  for (const format of Object.keys(SAMPLES)) {
    it(`${format}: declares its contract and yields lawful drafts, the same whatever the chunking`, async () => {
      const importer = importers.get(format)!;
      const { doc, type } = SAMPLES[format]!;
      assert.match(importer.format, /^[a-z0-9-]{1,40}$/);
      assert.ok(importer.mediaTypes.length > 0);
      assert.ok(importer.binding === 'host' || importer.binding === 'service');
      assert.equal(typeof importer.captured, 'boolean');
      const whole = await readAll(importer, doc(), type);
      assert.ok(whole.drafts.length > 0);
      for (const d of whole.drafts) checkDraft(d, importer);
      const bytewise = await readAll(importer, doc(), type, 7);
      assert.deepEqual(bytewise, whole, 'chunk boundaries change nothing');
    });

    it(`${format}: refuses empty, non-JSON and truncated documents with a 422 naming where`, async () => {
      const importer = importers.get(format)!;
      const { doc, type } = SAMPLES[format]!;
      for (const bad of [Buffer.alloc(0), Buffer.from('<html>not json</html>'), doc().subarray(0, Math.floor(doc().length / 2))]) {
        const detail = await rejects422(() => readAll(importer, bad, 'application/json'));
        assert.match(detail, /^[\w$.[\]"/{}-]+: /, detail);
      }
      void type;
    });
  }
});
