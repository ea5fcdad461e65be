import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';

const MAIN = new URL('../../../adapters/cli/main.js', import.meta.url).pathname;
const ROOT = new URL('../../../../', import.meta.url).pathname;
const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(path.join(tmpdir(), 'understudy-cli-'));
  dirs.push(d);
  return d;
}
// PGlite on disk, whatever the suite's DATABASE_URL: this is the `npm start` path.
const baseEnv = (dataDir: string, extra: Record<string, string> = {}) => {
  const env: NodeJS.ProcessEnv = { ...process.env, SERVICE_DATA_DIR: dataDir, PORT: '0', AGENT_PORT: '0', ...extra };
  delete env.DATABASE_URL;
  return env;
};

function cli(args: string[], env: NodeJS.ProcessEnv) {
  return spawnSync(process.execPath, [MAIN, ...args], { env, encoding: 'utf8', timeout: 60_000 });
}

/** Starts `understudy serve`, resolves once the control plane logs its port. */
function serve(env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; port: number; stdout: () => string }> {
  const child = spawn(process.execPath, [MAIN, 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no start within 30 s: ${out}${err}`)), 30_000);
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /"port":(\d+)[^\n]*control plane listening/.exec(out);
      if (m && /agent listening/.test(out)) {
        clearTimeout(timer);
        resolve({ child, port: Number(m[1]), stdout: () => out });
      }
    });
    child.on('exit', (code) => reject(new Error(`exited ${code}: ${out}${err}`)));
  });
}

/**
 * Runs the README's "first five minutes" block as written, with the printed key and this run's
 * ports; every curl must get a status below 400.
 */
function runReadmeWalkthrough(key: string, port: number, agentPort: number, upstreamPort: number): void {
  const readme = readFileSync(new URL('../../../../README.md', import.meta.url), 'utf8');
  const blockAfter = (heading: string) => /```sh\n([\s\S]*?)```/.exec(readme.slice(readme.indexOf(heading)))![1]!;
  const first = blockAfter('## The first five minutes');
  assert.match(first, /^KEY=usk_\.\.\./m);
  const ports = (text: string) => text.replaceAll('127.0.0.1:8000', `127.0.0.1:${port}`).replaceAll('127.0.0.1:8080', `127.0.0.1:${agentPort}`).replaceAll('9099', String(upstreamPort));
  // The first block must see only successes; the agent block shows a deliberate 404 (no mock),
  // the webhook block a deliberate 400 (the replay guard refusing cloud metadata); the
  // transition block (its upstream stopped whatever happens) must succeed throughout.
  for (const [script, below] of [
    [ports(first.replace(/^KEY=usk_\.\.\..*$/m, `KEY=${key}`)), 400],
    [`KEY=${key}\n${ports(blockAfter('## Recording through the agent'))}`, 405],
    [`KEY=${key}\n${ports(blockAfter('## Webhooks: capture, inspect, replay'))}`, 401],
    [`KEY=${key}\n${ports(blockAfter('## Cold start: a HAR, a Postman collection and an OpenAPI file'))}`, 400],
    [`trap 'kill $(jobs -p) 2>/dev/null || true' EXIT\nKEY=${key}\n${ports(blockAfter('## From recordings to mocks'))}`, 400],
  ] as const) {
    const guard = `set -e\ncurl() { local out; out=$(command curl -w '\\n%{http_code}' "$@"); echo "$out"; [ "\${out##*$'\\n'}" -lt ${below} ]; }\n`;
    const res = spawnSync('bash', ['-c', guard + script], { encoding: 'utf8', timeout: 60_000, cwd: ROOT });
    assert.equal(res.status, 0, `README walk-through failed:\n${res.stdout}\n${res.stderr}`);
    assert.ok((res.stdout.match(/^\d{3}$/gm) ?? []).length >= (script.match(/^curl /gm) ?? []).length);
    if (script.includes('/v1/transition/start')) {
      // The last two answers come from the mock library: scrubbed, the unseen id by its template.
      const answers = res.stdout.split('\n').filter((l) => l.startsWith('{')).slice(-2);
      for (const a of answers) {
        assert.match(a, /"object":"customer"/);
        assert.doesNotMatch(a, /jane\.doe@example\.com|4242 4242 4242 4242/);
      }
    }
  }
}

/** A port nothing listens on now. */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.removeAllListeners('exit');
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

describe('understudy CLI', () => {
  after(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('shows --help for every command', () => {
    for (const args of [[], ['serve'], ['control-plane'], ['agent'], ['migrate'], ['keys', 'create'], ['transition'], ['license', 'keygen'], ['license', 'issue'], ['import'], ['export']]) {
      const res = cli([...args, '--help'], process.env);
      assert.equal(res.status, 0, args.join(' '));
      assert.match(res.stdout, /Usage: understudy/);
    }
  });

  it('serve starts on PGlite, prints the first key once, and the key works', async () => {
    const dataDir = tempDir();
    let shopId: string | undefined;
    let petsId: string | undefined;
    // How fast it starts is measured by `npm run bench`, not asserted here.
    // The README's webhook section replays to the agent on this machine, as it tells the reader to.
    const { child, port, stdout } = await serve(baseEnv(dataDir, { SERVICE_ALLOW_LOCAL_REPLAY: '1' }));
    try {
      const key = /usk_[0-9A-Za-z]{40}/.exec(stdout())?.[0];
      assert.ok(key, 'a key was printed');
      const res = await fetch(`http://127.0.0.1:${port}/services`, { headers: { 'X-Service-Api-Key': key } });
      assert.equal(res.status, 200);
      const logLines = stdout().split('\n').filter((l) => l.startsWith('{'));
      assert.ok(logLines.every((l) => !l.includes(key)), 'the key is printed, never logged');
      runReadmeWalkthrough(key, port, Number(/"port":(\d+)[^\n]*agent listening/.exec(stdout())![1]), await freePort());
      // The walk-through answered from its imports (the shop's products came back from the HAR) and its transition.
      const products = await fetch(`http://127.0.0.1:${port}/mocks?limit=500`, { headers: { 'X-Service-Api-Key': key } });
      const entries = ((await products.json()) as { data: { source: string; service_id: string }[] }).data;
      assert.deepEqual([...new Set(entries.map((e) => e.source))].sort(), ['har', 'openapi', 'postman', 'recorded']);
      shopId = entries.find((e) => e.source === 'har')!.service_id;
      petsId = entries.find((e) => e.source === 'openapi')!.service_id;
    } finally {
      await stop(child);
    }
    // Offline, with the server stopped (PGlite belongs to one process): import and export.
    const imported = cli(['import', 'har', path.join(ROOT, 'test/fixtures/har/shop.har'), '--service', shopId!], baseEnv(dataDir));
    assert.equal(imported.status, 0, imported.stderr);
    assert.deepEqual(JSON.parse(imported.stdout).updated, 6, 'the same HAR again updates its entries');
    assert.equal(JSON.parse(imported.stdout).scrubbed, true, 'captured traffic is scrubbed by default');
    const raw = cli(['import', 'har', path.join(ROOT, 'test/fixtures/har/shop.har'), '--service', shopId!, '--no-scrub'], baseEnv(dataDir));
    assert.equal(JSON.parse(raw.stdout).scrubbed, false);
    const truncated = path.join(tempDir(), 'broken.json');
    writeFileSync(truncated, readFileSync(path.join(ROOT, 'test/fixtures/postman/petstore-expanded-v2.1.json'), 'utf8').slice(0, 3000));
    const refused = cli(['import', 'postman', truncated, '--service', petsId!], baseEnv(dataDir));
    assert.equal(refused.status, 1);
    assert.match(refused.stderr, /^understudy: validation_error: document: malformed JSON at its end \(truncated\?\)/);
    const out = path.join(tempDir(), 'library.har');
    const exported = cli(['export', '--out', out, '--format', 'har', '--all'], baseEnv(dataDir));
    assert.equal(exported.status, 0, exported.stderr);
    assert.ok((JSON.parse(readFileSync(out, 'utf8')) as { log: { entries: unknown[] } }).log.entries.length >= 14);
    // A second start finds the key and prints none; `keys create` then mints another.
    const again = await serve(baseEnv(dataDir));
    await stop(again.child);
    assert.doesNotMatch(again.stdout(), /usk_/);
    const minted = cli(['keys', 'create', '--name', 'ci'], baseEnv(dataDir));
    assert.equal(minted.status, 0, minted.stderr);
    assert.match(minted.stdout.trim(), /^usk_[0-9A-Za-z]{40}$/);
    assert.equal(cli(['migrate'], baseEnv(dataDir)).status, 0);
  });

  it('issues a licence that serve verifies, and refuses one that does not verify', async () => {
    const dir = tempDir();
    assert.equal(cli(['license', 'keygen', '--out', dir], process.env).status, 0);
    const issued = cli(['license', 'issue', '--tenant', 'acme', '--tier', 'pro', '--private-key', path.join(dir, 'private.pem'), '--days', '30'], process.env);
    assert.equal(issued.status, 0, issued.stderr);
    const licence = issued.stdout.trim();
    assert.equal(cli(['license', 'issue', '--tenant', 'acme', '--tier', 'gold', '--private-key', path.join(dir, 'private.pem')], process.env).status, 1);

    const key = `usk_${'K'.repeat(40)}`;
    const env = baseEnv(tempDir(), { SERVICE_LICENSE_KEY: licence, SERVICE_LICENSE_PUBLIC_KEY: path.join(dir, 'public.pem'), SERVICE_BOOTSTRAP_API_KEY: key });
    const { child, port } = await serve(env);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/v1/drift/events`, { headers: { 'X-Service-Api-Key': key } });
      assert.equal(res.status, 501, 'pro passes the tier gate');
    } finally {
      await stop(child);
    }
    const bad = cli(['serve'], { ...env, SERVICE_LICENSE_KEY: `${licence.split('.')[0]}.AAAA` });
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /does not verify/);
  });
});
