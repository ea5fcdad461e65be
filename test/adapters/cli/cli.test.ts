import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';

const MAIN = new URL('../../../adapters/cli/main.js', import.meta.url).pathname;
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
function runReadmeWalkthrough(key: string, port: number, agentPort: number): void {
  const readme = readFileSync(new URL('../../../../README.md', import.meta.url), 'utf8');
  const blockAfter = (heading: string) => /```sh\n([\s\S]*?)```/.exec(readme.slice(readme.indexOf(heading)))![1]!;
  const first = blockAfter('## The first five minutes');
  assert.match(first, /^KEY=usk_\.\.\./m);
  const ports = (text: string) => text.replaceAll('127.0.0.1:8000', `127.0.0.1:${port}`).replaceAll('127.0.0.1:8080', `127.0.0.1:${agentPort}`);
  // The first block must see only successes; the agent block shows a deliberate 404 (no mock).
  for (const [script, below] of [
    [ports(first.replace(/^KEY=usk_\.\.\..*$/m, `KEY=${key}`)), 400],
    [`KEY=${key}\n${ports(blockAfter('## Recording through the agent'))}`, 405],
  ] as const) {
    const guard = `set -e\ncurl() { local out; out=$(command curl -w '\\n%{http_code}' "$@"); echo "$out"; [ "\${out##*$'\\n'}" -lt ${below} ]; }\n`;
    const res = spawnSync('bash', ['-c', guard + script], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(res.status, 0, `README walk-through failed:\n${res.stdout}\n${res.stderr}`);
    assert.ok((res.stdout.match(/^\d{3}$/gm) ?? []).length >= (script.match(/^curl /gm) ?? []).length);
  }
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
    for (const args of [[], ['serve'], ['control-plane'], ['agent'], ['migrate'], ['keys', 'create'], ['license', 'keygen'], ['license', 'issue']]) {
      const res = cli([...args, '--help'], process.env);
      assert.equal(res.status, 0, args.join(' '));
      assert.match(res.stdout, /Usage: understudy/);
    }
  });

  it('serve starts on PGlite, prints the first key once, and the key works', async () => {
    const dataDir = tempDir();
    // How fast it starts is measured by `npm run bench`, not asserted here.
    const { child, port, stdout } = await serve(baseEnv(dataDir));
    try {
      const key = /usk_[0-9A-Za-z]{40}/.exec(stdout())?.[0];
      assert.ok(key, 'a key was printed');
      const res = await fetch(`http://127.0.0.1:${port}/services`, { headers: { 'X-Service-Api-Key': key } });
      assert.equal(res.status, 200);
      const logLines = stdout().split('\n').filter((l) => l.startsWith('{'));
      assert.ok(logLines.every((l) => !l.includes(key)), 'the key is printed, never logged');
      runReadmeWalkthrough(key, port, Number(/"port":(\d+)[^\n]*agent listening/.exec(stdout())![1]));
    } finally {
      await stop(child);
    }
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
