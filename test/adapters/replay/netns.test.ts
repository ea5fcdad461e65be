import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { it } from 'node:test';

/** The names the namespaced suite resolves, through the real resolver and this hosts file. */
const HOSTS = `127.0.0.1 localhost
::1 localhost
127.0.0.1 loop.test
10.0.0.5 evil.test
169.254.169.254 meta.test
93.184.216.34 mixed.test
10.0.0.1 mixed.test
fd12:3456::1 ula.test
10.9.9.9 pinned.test
`;

it('runs the end-to-end replay guard suite in a network namespace that has only loopback', (t) => {
  const probe = spawnSync('unshare', ['--net', '--mount', 'true']);
  if (probe.error || probe.status !== 0) {
    // CI runs as root; elsewhere the suite cannot make a namespace, and says so.
    t.skip(`unshare --net --mount is not available here (${probe.error?.message ?? probe.stderr.toString().trim()}); run as root`);
    return;
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'understudy-netns-'));
  try {
    const hosts = path.join(dir, 'hosts');
    writeFileSync(hosts, HOSTS);
    const child = fileURLToPath(new URL('./netns-child.js', import.meta.url));
    // The namespace has its own loopback only: PostgreSQL is not in it, so the suite uses PGlite.
    // NODE_TEST_CONTEXT would make the inner runner report to this one instead of exiting non-zero on failure.
    const env = { ...process.env, DATABASE_URL: '', NODE_TEST_CONTEXT: undefined };
    const script = `mount --bind "$1" /etc/hosts && ip link set lo up && exec "$2" --test --test-reporter=spec "$3"`;
    const res = spawnSync('unshare', ['--net', '--mount', '--', 'sh', '-c', script, 'sh', hosts, process.execPath, child], { env, encoding: 'utf8', timeout: 120_000 });
    assert.equal(res.status, 0, `namespaced suite failed:\n${res.stdout}\n${res.stderr}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
