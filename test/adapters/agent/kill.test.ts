import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { it } from 'node:test';
import { pino } from 'pino';
import { Store } from '../../../adapters/store/connection.js';
import { AgentDataRepo } from '../../../adapters/store/repositories/agent-data.js';
import { ChangeFeed } from '../../../adapters/store/repositories/change-versions.js';
import { SyncLayer } from '../../../adapters/volume/sync.js';

const MAIN = new URL('../../../adapters/cli/main.js', import.meta.url).pathname;

function post(port: number, p: string, body: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, method: 'POST', path: p, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
      res.on('error', () => resolve(0));
    });
    req.on('error', () => resolve(0));
    req.end(body);
  });
}

it('an agent killed with SIGKILL mid-burst loses no acknowledged capture and tears at most one line', async () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'understudy-kill-'));
  const key = `usk_${'K'.repeat(40)}`;
  const env: NodeJS.ProcessEnv = { ...process.env, SERVICE_DATA_DIR: dataDir, PORT: '0', AGENT_PORT: '0', SERVICE_BOOTSTRAP_API_KEY: key, SERVICE_RATE_LIMITS: 'global=1000000' };
  delete env.DATABASE_URL;
  const child = spawn(process.execPath, [MAIN, 'serve'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    let out = '';
    const ports = await new Promise<{ api: number; agent: number }>((resolve, reject) => {
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        const api = /"port":(\d+)[^\n]*control plane listening/.exec(out);
        const agent = /"port":(\d+)[^\n]*agent listening/.exec(out);
        if (api && agent) resolve({ api: Number(api[1]), agent: Number(agent[1]) });
      });
      child.once('exit', (code) => reject(new Error(`serve exited ${code}`)));
    });
    const created = await fetch(`http://127.0.0.1:${ports.api}/services`, {
      method: 'POST',
      headers: { 'X-Service-Api-Key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'hooks', upstream_url: 'http://127.0.0.1:9', routing_type: 'path_prefix', routing_value: '/hooks' }),
    });
    const svc = String(((await created.json()) as { id: string }).id);

    const acknowledged = new Set<number>();
    let next = 0;
    let killed = false;
    const worker = async () => {
      while (!killed) {
        const n = next++;
        const status = await post(ports.agent, `/webhook/default/${svc}`, JSON.stringify({ n, pad: 'x'.repeat(2000) }));
        if (status === 200) acknowledged.add(n);
      }
    };
    const workers = Array.from({ length: 32 }, worker);
    while (acknowledged.size < 500) await new Promise((r) => setTimeout(r, 10));
    child.kill('SIGKILL');
    killed = true;
    await Promise.all(workers);

    const text = readFileSync(path.join(dataDir, 'webhooks', `${svc}.jsonl`), 'utf8');
    const rawLines = text.split('\n');
    // Everything before the last newline must be whole records; after it, at most one partial line.
    const complete = rawLines.slice(0, -1);
    const bad = complete.filter((l) => {
      try {
        JSON.parse(l);
        return false;
      } catch {
        return true;
      }
    });
    assert.equal(bad.length, 0, 'every complete line is a whole record');
    const inFile = new Set(complete.map((l) => (JSON.parse(JSON.parse(l).body as string) as { n: number }).n));
    const lost = [...acknowledged].filter((n) => !inFile.has(n));
    assert.deepEqual(lost, [], 'every acknowledged capture is in the file');

    const store = Store.open({ memory: true });
    try {
      await store.migrate();
      const changes = new ChangeFeed(store);
      const sync = new SyncLayer(dataDir, new AgentDataRepo(store, changes), changes, pino({ level: 'silent' }));
      const report = await sync.runOnce();
      assert.equal(report.imported.webhooks, complete.length);
      assert.equal(report.skipped.length, 0);
    } finally {
      await store.close();
    }
  } finally {
    child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
});
