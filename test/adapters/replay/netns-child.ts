/**
 * The replay guard end to end, over the real API and the real resolver. It runs only inside a
 * network namespace that has nothing but loopback (netns.test.ts starts it there with its own
 * /etc/hosts), so a guard bug fails here with ENETUNREACH instead of reaching a network.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { after, before, describe, it } from 'node:test';
import { sendReplay } from '../../../adapters/replay/replay.js';
import { startHarness, type Harness } from '../../helpers/harness.js';

/** A loopback listener on every local address (dual-stack `::`) that counts connections. */
function canary(): Promise<{ server: Server; port: number; connections: () => number }> {
  let connections = 0;
  const server = createServer((_req, res) => {
    res.writeHead(204);
    res.end();
  });
  server.on('connection', () => connections++);
  return new Promise((resolve) => server.listen({ port: 0, host: '::', ipv6Only: false }, () => resolve({ server, port: (server.address() as AddressInfo).port, connections: () => connections })));
}

async function withCapture(h: Harness): Promise<(target: string) => Promise<{ status: number; code: unknown; body: Record<string, unknown> }>> {
  const svc = (await h.call('POST', '/services', { body: { name: 'hooks', upstream_url: 'http://127.0.0.1:9', routing_type: 'path_prefix', routing_value: '/hooks' } })).body.id as string;
  assert.equal((await fetch(`${h.agentUrl}/webhook/default/${svc}`, { method: 'POST', body: '{"event":"x"}' })).status, 200);
  const id = ((await h.call('GET', `/v1/webhooks/${svc}`)).body.data as { id: string }[])[0]!.id;
  return async (target) => {
    const res = await h.call('POST', `/v1/webhooks/${svc}/${id}/replay`, { body: { target_url: target, timeout_seconds: 2 } });
    return { status: res.status, code: res.body.error_code, body: res.body };
  };
}

describe('replay guard inside a loopback-only network namespace', () => {
  let listener: Awaited<ReturnType<typeof canary>>;
  before(async () => {
    const names = Object.keys(networkInterfaces());
    assert.deepEqual(names, ['lo'], `this suite must run in a namespace with only loopback, not beside ${names.join(', ')}`);
    listener = await canary();
  });
  after(() => {
    listener.server.closeAllConnections();
    listener.server.close();
  });

  it('refuses every hostile target before a socket opens (default policy)', async () => {
    const h = await startHarness();
    try {
      const replay = await withCapture(h);
      const p = listener.port;
      const blocked = [
        `http://127.0.0.1:${p}/`,
        `http://127.1:${p}/`,
        `http://2130706433:${p}/`,
        `http://0x7f000001:${p}/`,
        `http://017700000001:${p}/`,
        `http://0:${p}/`,
        `http://0.0.0.0:${p}/`,
        `http://[::]:${p}/`,
        `http://[::1]:${p}/`,
        `http://[::ffff:127.0.0.1]:${p}/`,
        `http://[::ffff:0:127.0.0.1]:${p}/`,
        `http://[64:ff9b::7f00:1]:${p}/`,
        `http://localhost:${p}/`,
        `http://localhost.:${p}/`,
        `http://loop.test:${p}/`,
        `http://LOOP.TEST.:${p}/`,
        `http://mixed.test:${p}/`,
        `http://evil.test:${p}/`,
        `http://meta.test/`,
        `http://ula.test:${p}/`,
        `http://169.254.169.254/latest/meta-data/`,
        `http://[fd00:ec2::254]/`,
        `http://metadata.google.internal/computeMetadata/v1/`,
        `http://100.100.100.200/`,
        `http://10.0.0.5:${p}/`,
        `http://192.168.0.10:${p}/`,
        `http://user:pw@127.0.0.1:${p}/`,
        `http://127.0.0.1:22/`,
      ];
      const wrong: string[] = [];
      for (const target of blocked) {
        const got = await replay(target);
        if (got.status !== 400 || got.code !== 'replay_target_blocked') wrong.push(`${target}: ${got.status} ${JSON.stringify(got.body)}`);
      }
      const unresolved = await replay(`http://no-such-host.test:${p}/`);
      if (unresolved.status !== 400 || unresolved.code !== 'replay_dns_failed') wrong.push(`no-such-host.test: ${unresolved.status} ${JSON.stringify(unresolved.body)}`);
      assert.deepEqual(wrong, []);
      assert.equal(listener.connections(), 0, 'no refused target reached the loopback listener');
    } finally {
      await h.close();
    }
  });

  it('SERVICE_ALLOW_LOCAL_REPLAY=1 opens loopback and private addresses only', async () => {
    const h = await startHarness({ env: { SERVICE_ALLOW_LOCAL_REPLAY: '1' } });
    try {
      const replay = await withCapture(h);
      const p = listener.port;
      for (const target of [`http://127.0.0.1:${p}/`, `http://localhost:${p}/`, `http://[::1]:${p}/`, `http://loop.test:${p}/`]) {
        const got = await replay(target);
        assert.deepEqual([got.status, got.body.status_code], [200, 204], `${target}: ${JSON.stringify(got.body)}`);
      }
      for (const target of ['http://169.254.169.254/', 'http://meta.test/', 'http://metadata.google.internal/', 'http://[fd00:ec2::254]/', 'http://100.64.0.1/', `http://127.0.0.1:25/`, `http://0.0.0.0:${p}/`]) {
        const got = await replay(target);
        assert.deepEqual([got.status, got.code], [400, 'replay_target_blocked'], target);
      }
      // A private address passes the relaxed guard; in this namespace it cannot be reached.
      const unreachable = await replay(`http://evil.test:${p}/`);
      assert.deepEqual([unreachable.status, unreachable.code], [502, 'replay_upstream_error'], JSON.stringify(unreachable.body));
    } finally {
      await h.close();
    }
  });

  it('connects to the checked address only: a name is never looked up again', async () => {
    // /etc/hosts says pinned.test is 10.9.9.9, unreachable here; the checked address is loopback.
    const before = listener.connections();
    const capture = { id: 'wh_0123456789abcdef', received_at: new Date().toISOString(), tenant: 'default', service_id: 'svc_x', method: 'POST', uri: '/webhook/default/svc_x', headers: {}, body: '{}', signature_kind: 'generic' as const };
    const url = new URL(`http://pinned.test:${listener.port}/pin`);
    const result = await sendReplay(capture, { url, hostname: 'pinned.test', port: listener.port, address: '127.0.0.1', family: 4 }, { preserveSignature: true, timeoutMs: 2000 });
    assert.equal(result.status_code, 204);
    assert.equal(listener.connections(), before + 1);
  });
});
