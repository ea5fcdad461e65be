import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addressRefusal, checkReplayTarget, type Resolver } from '../../../adapters/replay/guard.js';
import { isAppError } from '../../../kernel/errors.js';

/** A fixed DNS table: no lookup leaves this process. Names not listed do not exist. */
const TABLE: Record<string, string[] | 'hang'> = {
  'evil.test': ['10.0.0.5'],
  'loop.test': ['127.0.0.1'],
  'v6loop.test': ['::1'],
  'mixed.test': ['93.184.216.34', '10.0.0.1'],
  'rebind.test': ['93.184.216.34', '127.0.0.1'],
  'meta.test': ['169.254.169.254'],
  'mapped.test': ['::ffff:169.254.169.254'],
  'cgnat.test': ['100.64.1.1'],
  'ula.test': ['fd12:3456::1'],
  'public.test': ['93.184.216.34'],
  'dual.test': ['2606:2800:220:1:248:1893:25c8:1946', '93.184.216.34'],
  'empty.test': [],
  'slow.test': 'hang',
};
const resolve: Resolver = async (hostname) => {
  const entry = TABLE[hostname];
  if (entry === 'hang') return new Promise(() => undefined);
  if (!entry) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  return entry.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};

type Outcome = 'ok' | 'invalid' | 'blocked' | 'dns';

async function outcome(target: string, allowLocal = false): Promise<{ outcome: Outcome; address?: string; detail?: string }> {
  try {
    const checked = await checkReplayTarget(target, { allowLocal, resolve, timeoutMs: 200 });
    return { outcome: 'ok', address: checked.address };
  } catch (err) {
    if (!isAppError(err)) throw err;
    const byCode = { validation_error: 'invalid', replay_target_blocked: 'blocked', replay_dns_failed: 'dns' } as const;
    assert.ok(err.code in byCode, `unexpected ${err.code}`);
    assert.equal(err.status, err.code === 'validation_error' ? 422 : 400);
    return { outcome: byCode[err.code as keyof typeof byCode], detail: err.message };
  }
}

/** Hostile targets, with what the guard must say. Default mode (no SERVICE_ALLOW_LOCAL_REPLAY). */
const HOSTILE: [string, Outcome][] = [
  // malformed or wrong scheme: 422 before anything else
  ['', 'invalid'],
  ['not a url', 'invalid'],
  ['/relative/path', 'invalid'],
  ['//127.0.0.1/', 'invalid'],
  ['ftp://public.test/', 'invalid'],
  ['file:///etc/passwd', 'invalid'],
  ['gopher://public.test:70/_GET', 'invalid'],
  ['javascript:alert(1)', 'invalid'],
  ['data:text/plain,hi', 'invalid'],
  ['ws://public.test/', 'invalid'],
  ['http://', 'invalid'],
  ['http://[::1', 'invalid'],
  ['http://1.2.3.4.5/', 'invalid'],
  ['http://public.test:99999/', 'invalid'],
  ['http://exa mple.test/', 'invalid'],
  // IPv4 loopback in every spelling
  ['http://127.0.0.1/', 'blocked'],
  ['http://127.0.0.1.:8080/', 'blocked'],
  ['http://127.1/', 'blocked'],
  ['http://127.0.1/', 'blocked'],
  ['http://2130706433/', 'blocked'],
  ['http://0x7f000001/', 'blocked'],
  ['http://0x7f.0x0.0x0.0x1/', 'blocked'],
  ['http://017700000001/', 'blocked'],
  ['http://0177.0.0.01/', 'blocked'],
  ['http://%31%32%37.0.0.1/', 'blocked'],
  ['http://１２７.０.０.１/', 'blocked'],
  ['http://127.255.255.254/', 'blocked'],
  ['http://0/', 'blocked'],
  ['http://0.0.0.0/', 'blocked'],
  ['http://localhost/', 'blocked'],
  ['http://LOCALHOST./', 'blocked'],
  ['http://api.localhost/', 'blocked'],
  // private, CGNAT, link-local, multicast, broadcast, reserved
  ['http://10.0.0.1/', 'blocked'],
  ['http://10.255.255.255/', 'blocked'],
  ['http://172.16.0.1/', 'blocked'],
  ['http://172.31.255.1/', 'blocked'],
  ['http://192.168.1.1/', 'blocked'],
  ['http://0xc0a80101/', 'blocked'],
  ['http://100.64.0.1/', 'blocked'],
  ['http://100.127.255.254/', 'blocked'],
  ['http://169.254.1.1/', 'blocked'],
  ['http://224.0.0.1/', 'blocked'],
  ['http://255.255.255.255/', 'blocked'],
  ['http://240.0.0.1/', 'blocked'],
  ['http://192.0.2.1/', 'blocked'],
  ['http://198.18.0.1/', 'blocked'],
  // cloud metadata, by address and by name
  ['http://169.254.169.254/latest/meta-data/', 'blocked'],
  ['http://0xa9fea9fe/', 'blocked'],
  ['http://2852039166/', 'blocked'],
  ['http://169.254.170.2/v2/credentials', 'blocked'],
  ['http://100.100.100.200/latest/meta-data', 'blocked'],
  ['http://192.0.0.192/', 'blocked'],
  ['http://[fd00:ec2::254]/', 'blocked'],
  ['http://metadata.google.internal/computeMetadata/v1/', 'blocked'],
  ['http://METADATA.GOOGLE.INTERNAL./', 'blocked'],
  ['http://metadata/', 'blocked'],
  ['http://instance-data/', 'blocked'],
  // IPv6 literals and the forms that carry an IPv4 address
  ['http://[::1]/', 'blocked'],
  ['http://[0:0:0:0:0:0:0:1]/', 'blocked'],
  ['http://[::]/', 'blocked'],
  ['http://[::ffff:127.0.0.1]/', 'blocked'],
  ['http://[::ffff:7f00:1]/', 'blocked'],
  ['http://[::ffff:169.254.169.254]/', 'blocked'],
  ['http://[::ffff:10.0.0.1]/', 'blocked'],
  ['http://[::ffff:0:127.0.0.1]/', 'blocked'],
  ['http://[::127.0.0.1]/', 'blocked'],
  ['http://[64:ff9b::127.0.0.1]/', 'blocked'],
  ['http://[64:ff9b::a9fe:a9fe]/', 'blocked'],
  ['http://[64:ff9b:1::1]/', 'blocked'],
  ['http://[2002:7f00:1::]/', 'blocked'],
  ['http://[2002:a9fe:a9fe::1]/', 'blocked'],
  ['http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/', 'blocked'],
  ['http://[fe80::1]/', 'blocked'],
  ['http://[fc00::1]/', 'blocked'],
  ['http://[fd12:3456::1]/', 'blocked'],
  ['http://[ff02::1]/', 'blocked'],
  // userinfo tricks
  ['http://public.test@127.0.0.1/', 'blocked'],
  ['http://user:pass@public.test/', 'blocked'],
  ['http://127.0.0.1#@public.test/', 'blocked'],
  ['http://127.0.0.1\\@public.test/', 'blocked'],
  // bad ports, on an otherwise fine host
  ['http://public.test:22/', 'blocked'],
  ['http://public.test:25/', 'blocked'],
  ['https://public.test:6667/', 'blocked'],
  ['http://public.test:0/', 'blocked'],
  ['http://93.184.216.34:10080/', 'blocked'],
  // names: every resolved address is checked
  ['http://evil.test/', 'blocked'],
  ['http://loop.test/', 'blocked'],
  ['http://v6loop.test/', 'blocked'],
  ['http://mixed.test/', 'blocked'],
  ['http://rebind.test/', 'blocked'],
  ['http://meta.test/', 'blocked'],
  ['http://mapped.test/', 'blocked'],
  ['http://cgnat.test/', 'blocked'],
  ['http://ula.test/', 'blocked'],
  ['http://nowhere.test/', 'dns'],
  ['http://empty.test/', 'dns'],
  ['http://slow.test/', 'dns'],
];

describe('replay guard', () => {
  it(`refuses ${HOSTILE.length} hostile targets with the right status`, async () => {
    assert.ok(HOSTILE.length >= 60);
    const wrong: string[] = [];
    for (const [target, want] of HOSTILE) {
      const got = await outcome(target);
      if (got.outcome !== want) wrong.push(`${JSON.stringify(target)}: want ${want}, got ${got.outcome}${got.detail ? ` (${got.detail})` : ''}`);
    }
    assert.deepEqual(wrong, []);
  });

  it('accepts public targets and pins the connection to the first checked address', async () => {
    assert.deepEqual(await outcome('https://public.test/hooks?x=1'), { outcome: 'ok', address: '93.184.216.34' });
    assert.deepEqual(await outcome('http://dual.test:8443/'), { outcome: 'ok', address: '2606:2800:220:1:248:1893:25c8:1946' });
    assert.deepEqual(await outcome('http://93.184.216.34:8080/'), { outcome: 'ok', address: '93.184.216.34' });
    assert.deepEqual(await outcome('http://[2606:2800:220:1:248:1893:25c8:1946]/'), { outcome: 'ok', address: '2606:2800:220:1:248:1893:25c8:1946' });
    // A public address carried in a transition form is judged by that address.
    assert.equal((await outcome('http://[::ffff:93.184.216.34]/')).outcome, 'ok');
    assert.equal((await outcome('http://[64:ff9b::93.184.216.34]/')).outcome, 'ok');
  });

  it('SERVICE_ALLOW_LOCAL_REPLAY relaxes loopback and private checks only', async () => {
    const relaxed: [string, Outcome][] = [
      ['http://127.0.0.1:9000/', 'ok'],
      ['http://localhost:9000/', 'dns'], // resolved for real only in the network-namespace suite; the fixed table has no localhost
      ['http://loop.test/', 'ok'],
      ['http://[::1]/', 'ok'],
      ['http://[::ffff:127.0.0.1]/', 'ok'],
      ['http://10.0.0.1/', 'ok'],
      ['http://192.168.1.1/', 'ok'],
      ['http://evil.test/', 'ok'],
      ['http://ula.test/', 'ok'],
      // still refused
      ['ftp://127.0.0.1/', 'invalid'],
      ['http://127.0.0.1:22/', 'blocked'],
      ['http://169.254.169.254/', 'blocked'],
      ['http://[fd00:ec2::254]/', 'blocked'],
      ['http://100.100.100.200/', 'blocked'],
      ['http://metadata.google.internal/', 'blocked'],
      ['http://meta.test/', 'blocked'],
      ['http://100.64.0.1/', 'blocked'],
      ['http://169.254.1.1/', 'blocked'],
      ['http://0.0.0.0/', 'blocked'],
      ['http://224.0.0.1/', 'blocked'],
      ['http://user:pw@127.0.0.1/', 'blocked'],
    ];
    const wrong: string[] = [];
    for (const [target, want] of relaxed) {
      const got = await outcome(target, true);
      if (got.outcome !== want) wrong.push(`${target}: want ${want}, got ${got.outcome} ${got.detail ?? ''}`);
    }
    assert.deepEqual(wrong, []);
  });

  it('explains each refusal without echoing a query string', async () => {
    assert.match((await outcome('http://10.0.0.1/')).detail!, /10\.0\.0\.1 is a private \(RFC 1918\) address/);
    assert.match((await outcome('http://mixed.test/')).detail!, /mixed\.test resolves to 10\.0\.0\.1/);
    assert.match((await outcome('http://[::ffff:10.0.0.1]/')).detail!, /carries 10\.0\.0\.1/);
    assert.doesNotMatch((await outcome('http://10.0.0.1/?token=s3cret')).detail!, /s3cret/);
    assert.equal(addressRefusal('8.8.8.8', false), null);
    assert.match(addressRefusal('not-an-ip', false)!, /not an IP address/);
  });
});
