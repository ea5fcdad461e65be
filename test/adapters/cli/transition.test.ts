import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { trafficRecord } from '../../helpers/traffic.js';

const MAIN = new URL('../../../adapters/cli/main.js', import.meta.url).pathname;
const dir = mkdtempSync(path.join(tmpdir(), 'understudy-offline-'));
const run = (args: string[]) => spawnSync(process.execPath, [MAIN, 'transition', ...args], { env: { ...process.env, SERVICE_DATA_DIR: dir, SERVICE_WORKERS: '1' }, encoding: 'utf8', timeout: 60_000 });

describe('understudy transition (offline)', () => {
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('turns a JSONL recording into a scrubbed, templated library file, keyed by a key file it makes once', () => {
    const traffic = path.join(dir, 'svc_a.jsonl');
    const lines = Array.from({ length: 30 }, (_, i) =>
      JSON.stringify(trafficRecord({ service_id: i < 25 ? 'svc_a' : 'svc_b', uri: `/v1/users/${1000 + i}?api_key=secret${i}abcdef`, response: { body: { id: 1000 + i, email: `user${i}@corp.example.com` } } })),
    );
    writeFileSync(traffic, `${lines.join('\n')}\n{"torn":\n`);
    const out = path.join(dir, 'library.json');
    const res = run(['--traffic', traffic, '--service', 'svc_a', '--out', out]);
    assert.equal(res.status, 0, res.stderr);
    assert.match(res.stderr, /25 records → 25 entries on 1 endpoints \(1 templated\); skipped: 5 other service, 1 invalid; written to/);
    const library = JSON.parse(readFileSync(out, 'utf8')) as { entries: { uri_template: string; response: { body: string }; query: unknown; scrubbed: boolean }[]; endpoints: { uri_template: string }[] };
    assert.equal(library.entries.length, 25);
    assert.ok(library.entries.every((e) => e.uri_template === '/v1/users/{user_id}' && e.scrubbed && e.query === null));
    assert.doesNotMatch(readFileSync(out, 'utf8'), /corp\.example\.com|secret\d+abcdef/);
    const key = path.join(dir, 'offline-pseudonym.key');
    assert.equal(statSync(key).mode & 0o777, 0o600);
    // Same key, same pseudonyms: a second run writes the same entries.
    assert.deepEqual((JSON.parse(run(['--traffic', traffic, '--service', 'svc_a']).stdout) as typeof library).entries, library.entries);
  });

  it('names what is wrong: a missing option, bad rules', () => {
    assert.notEqual(run(['--traffic', 'x.jsonl']).status, 0);
    const rules = path.join(dir, 'rules.json');
    writeFileSync(rules, JSON.stringify({ '*': { patterns: { broken: '(' } } }));
    const bad = run(['--traffic', path.join(dir, 'svc_a.jsonl'), '--service', 'svc_a', '--rules', rules]);
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /scrub_rules.*patterns\.broken/);
  });
});
