/** Shared pieces of the benchmarks: pinned child servers, autocannon runs, medians, the doc. */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import autocannon from 'autocannon';
import { Store } from '../../adapters/store/connection.js';

export const hasTaskset = spawnSync('taskset', ['-V']).status === 0;
/** wrk generates GET load far faster than autocannon on one core; used when installed. */
export const hasWrk = spawnSync('wrk', ['-v']).error === undefined;
const DOC = new URL('../../../docs/benchmarks.md', import.meta.url);

/** Pins this process (the load generator) to CPU 1. */
export function pinSelf(): void {
  if (hasTaskset) spawnSync('taskset', ['-cp', '1', String(process.pid)]);
}

export function machine(): string {
  return `${cpus().length} × ${cpus()[0]?.model.trim()}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}; GET load by ${generator}${hasTaskset ? ', servers pinned to CPU 0, the load generator to CPU 1' : ''}`;
}

/** Starts a server script pinned to CPU 0; resolves with what it printed once listening. */
export function startServer<T extends { port: number }>(script: string, args: string[]): Promise<T & { child: ChildProcess }> {
  const cmd = hasTaskset ? 'taskset' : process.execPath;
  const argv = hasTaskset ? ['-c', '0', process.execPath, script, ...args] : [script, ...args];
  const child = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.stdout!.once('data', (d: Buffer) => resolve({ child, ...(JSON.parse(d.toString()) as T) }));
    child.once('exit', (code) => reject(new Error(`${script} ${args.join(' ')} exited ${code}`)));
  });
}

/** CPU seconds a process has used (user + system), from /proc; NaN where there is no /proc. */
export function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  cpu: number;
}

/** Which load generator `load` uses for GETs. */
export const generator = hasWrk ? 'wrk -t1' : 'autocannon';

function wrkRun(opts: { url: string; seconds: number; connections: number; headers?: Record<string, string> }): Promise<{ rps: number; p50: number; p99: number }> {
  const args = ['-t1', `-c${opts.connections}`, `-d${opts.seconds}s`, '--latency', ...Object.entries(opts.headers ?? {}).flatMap(([k, v]) => ['-H', `${k}: ${v}`]), opts.url];
  return new Promise((resolve, reject) => {
    const child = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', () => {
      const ms = (label: string) => {
        const m = new RegExp(`^\\s*${label}%\\s+([\\d.]+)(us|ms|s)`, 'm').exec(out);
        if (!m) return NaN;
        return Number(m[1]) * (m[2] === 'us' ? 0.001 : m[2] === 's' ? 1000 : 1);
      };
      const rps = /Requests\/sec:\s+([\d.]+)/.exec(out);
      if (!rps || /Non-2xx|Socket errors/.test(out)) return reject(new Error(`${opts.url}: wrk saw errors or no result:\n${out}`));
      resolve({ rps: Number(rps[1]), p50: ms('50'), p99: ms('99') });
    });
  });
}

/** One load run (wrk for GETs when installed, else autocannon); fails on any non-2xx answer or socket error. */
export async function load(opts: { url: string; pid: number; seconds: number; connections?: number; headers?: Record<string, string>; method?: 'GET' | 'POST'; body?: string }): Promise<LoadResult> {
  const before = cpuSeconds(opts.pid);
  const started = performance.now();
  let result: { rps: number; p50: number; p99: number };
  if (hasWrk && (opts.method ?? 'GET') === 'GET') {
    result = await wrkRun({ url: opts.url, seconds: opts.seconds, connections: opts.connections ?? 50, headers: opts.headers });
  } else {
    const r = await autocannon({ url: opts.url, connections: opts.connections ?? 50, duration: opts.seconds, headers: opts.headers, method: opts.method ?? 'GET', body: opts.body });
    if (r.non2xx || r.errors) throw new Error(`${opts.url}: ${r.non2xx} non-2xx, ${r.errors} errors`);
    result = { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99 };
  }
  const cpu = (cpuSeconds(opts.pid) - before) / ((performance.now() - started) / 1000);
  return { ...result, cpu };
}

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
export const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
export const fmt = (n: number) => n.toLocaleString('en-US', { maximumFractionDigits: 0 });

/**
 * Runs `rounds` rounds over several targets, alternating them within each round so a drifting
 * machine hits all alike; returns every run per target.
 */
export async function alternate(rounds: number, targets: Record<string, () => Promise<LoadResult>>): Promise<Record<string, LoadResult[]>> {
  const out: Record<string, LoadResult[]> = Object.fromEntries(Object.keys(targets).map((k) => [k, []]));
  for (let i = 0; i < rounds; i++) for (const [name, run] of Object.entries(targets)) out[name]!.push(await run());
  return out;
}

/** Replaces (or appends) the section between `<!-- bench:NAME:start -->` and its end marker. */
export function writeSection(name: string, markdown: string): void {
  const start = `<!-- bench:${name}:start -->`;
  const end = `<!-- bench:${name}:end -->`;
  const section = `${start}\n${markdown.trim()}\n${end}`;
  let doc: string;
  try {
    doc = readFileSync(DOC, 'utf8');
  } catch {
    doc = '# Benchmarks\n';
  }
  const re = new RegExp(`${start}[\\s\\S]*${end}`);
  writeFileSync(DOC, re.test(doc) ? doc.replace(re, section) : `${doc.trimEnd()}\n\n${section}\n`);
  process.stdout.write(`${section}\n`);
}

/** True when PostgreSQL answers at `url` (the benches measure it beside PGlite when it does). */
export async function pgReachable(url: string): Promise<boolean> {
  const store = Store.open({ databaseUrl: url });
  try {
    await store.ping(2000);
    return true;
  } catch {
    return false;
  } finally {
    await store.close();
  }
}

/** The PostgreSQL the benches use beside PGlite: DATABASE_URL, else the local test database. */
export const BENCH_PG_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
