/**
 * Library figures: a 100 MB HAR of 50,000 entries imported (target ≤ 15 s, peak RSS ≤ 400 MB)
 * beside a plain streaming parse of the same file; GitHub's REST description (OpenAPI 3.0,
 * ~1,200 operations, 13 MB) imported (target ≤ 10 s) beside a plain JSON.parse of it. Each import
 * runs in a process of its own against a fresh embedded database, then again against PostgreSQL
 * (DATABASE_URL, else the local test database) when it answers.
 */
import { spawnSync } from 'node:child_process';
import { createReadStream, createWriteStream, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { Tokenizer, TokenParser } from '@streamparser/json';
import { BENCH_PG_URL, hasTaskset, machine, pgReachable } from './lib.js';

const IMPORT = new URL('./library-import.js', import.meta.url).pathname;
const GITHUB = new URL('../../../test/fixtures/openapi/github-api.json.gz', import.meta.url);

/** Writes a HAR of `entries` exchanges, about 2 KB each, without holding it in memory. */
async function writeHar(file: string, entries: number): Promise<void> {
  const out = createWriteStream(file);
  const write = (s: string) => (out.write(s) ? undefined : new Promise<void>((r) => out.once('drain', () => r())));
  await write('{"log":{"version":"1.2","creator":{"name":"bench","version":"1"},"entries":[');
  const filler = 'lorem ipsum dolor sit amet '.repeat(55);
  for (let i = 0; i < entries; i++) {
    const body = JSON.stringify({ id: `item_${i}`, index: i, name: `Item ${i}`, description: filler, tags: ['a', 'b', 'c'] });
    const entry = {
      startedDateTime: '2026-01-01T00:00:00.000Z',
      time: 12,
      request: { method: i % 10 === 0 ? 'POST' : 'GET', url: `https://api.bench.test/v1/items/${i}?page=${i % 7}`, httpVersion: 'HTTP/1.1', headers: [{ name: 'accept', value: 'application/json' }], queryString: [], cookies: [], headersSize: -1, bodySize: 0, ...(i % 10 === 0 && { postData: { mimeType: 'application/json', text: `{"n":${i}}` } }) },
      response: { status: 200, statusText: 'OK', httpVersion: 'HTTP/1.1', headers: [{ name: 'content-type', value: 'application/json' }, { name: 'x-request-id', value: `req_${i}` }], cookies: [], content: { size: body.length, mimeType: 'application/json', text: body }, redirectURL: '', headersSize: -1, bodySize: body.length },
      cache: {},
      timings: { send: 0, wait: 10, receive: 2 },
    };
    await write(`${i ? ',' : ''}${JSON.stringify(entry)}`);
  }
  await write(']}}');
  await new Promise<void>((r) => out.end(() => r()));
}

/** The baseline: the same streaming parser over the file, doing nothing with the entries. */
async function plainStreamParse(file: string): Promise<number> {
  const started = performance.now();
  const tokenizer = new Tokenizer();
  const parser = new TokenParser({ paths: ['$.log.entries.*'], keepStack: false });
  let n = 0;
  tokenizer.onToken = parser.write.bind(parser);
  parser.onValue = () => void n++;
  for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 })) tokenizer.write(chunk as Buffer);
  if (!n) throw new Error('no entries parsed');
  return (performance.now() - started) / 1000;
}

function importOnce(format: string, file: string, mediaType: string, upstream: string, databaseUrl: string | null, scrub?: boolean): { seconds: number; rssBeforeMiB: number; maxRssMiB: number; created: number } {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'understudy-bench-lib-'));
  const env = { ...process.env, DATABASE_URL: databaseUrl ?? '', BENCH_SCRUB: scrub === undefined ? '' : String(scrub) };
  try {
    const res = spawnSync(process.execPath, [IMPORT, format, file, mediaType, upstream, dataDir], { encoding: 'utf8', env, timeout: 300_000 });
    if (res.status !== 0) throw new Error(`import ${format} failed: ${res.stderr}`);
    return JSON.parse(res.stdout.trim().split('\n').at(-1)!) as { seconds: number; rssBeforeMiB: number; maxRssMiB: number; created: number };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export async function librarySection(): Promise<string> {
  // An import runs on every core, as `understudy import` does (GC and, on PGlite, the database
  // share its process); the HTTP benchmarks pin this process, and children inherit that.
  if (hasTaskset) spawnSync('taskset', ['-cp', `0-${cpus().length - 1}`, String(process.pid)]);
  const dir = mkdtempSync(path.join(tmpdir(), 'understudy-bench-docs-'));
  try {
    const har = path.join(dir, 'big.har');
    await writeHar(har, 50_000);
    const harMiB = statSync(har).size / 2 ** 20;
    const harBase = await plainStreamParse(har);
    const databases: [string, string | null][] = [['PGlite on disk', null]];
    if (await pgReachable(BENCH_PG_URL)) databases.push(['PostgreSQL 127.0.0.1', BENCH_PG_URL]);
    const harRuns = databases.map(([name, url]) => [name, importOnce('har', har, 'application/json', 'https://api.bench.test', url)] as const);
    // What the default scrubbing costs: the same import stored as captured.
    const harRaw = databases.map(([name, url]) => [`${name}, \`scrub=false\``, importOnce('har', har, 'application/json', 'https://api.bench.test', url, false)] as const);
    const github = path.join(dir, 'github.json');
    writeFileSync(github, gunzipSync(readFileSync(GITHUB)));
    const ghStarted = performance.now();
    JSON.parse(readFileSync(github, 'utf8'));
    const ghBase = (performance.now() - ghStarted) / 1000;
    const ghRuns = databases.map(([name, url]) => [name, importOnce('openapi', github, 'application/json', 'https://api.github.com', url)] as const);
    const s = (x: number) => x.toFixed(2);
    const ghMiB = (statSync(github).size / 2 ** 20).toFixed(0);
    return [
      '## Library: seed imports',
      '',
      `Measured ${new Date().toISOString().slice(0, 10)} with \`BENCH_ONLY=library npm run bench\` on ${machine()}. Each import runs in its own process, on every core, through the seed pipeline (as \`understudy import\`), into a fresh database, all or nothing in one transaction, with the defaults: the HAR (captured traffic) is scrubbed on the way in, the OpenAPI description is not. Peak RSS is the importing process's own; *RSS before* is that process ready to import (on PGlite it holds the embedded database).`,
      '',
      '| document | database | size | entries written | import s | RSS before MiB | peak RSS MiB | baseline in the same run | target |',
      '|---|---|---:|---:|---:|---:|---:|---|---|',
      ...[...harRuns, ...harRaw].map(([db, r]) => `| HAR 1.2, 50,000 entries | ${db} | ${harMiB.toFixed(0)} MB | ${r.created.toLocaleString('en-US')} | ${s(r.seconds)} | ${r.rssBeforeMiB.toFixed(0)} | ${r.maxRssMiB.toFixed(0)} | streaming parse alone (@streamparser/json): ${s(harBase)} s | ≤ 15 s, ≤ 400 MB |`),
      ...ghRuns.map(([db, r]) => `| GitHub REST description (OpenAPI 3.0.3, 1,223 operations) | ${db} | ${ghMiB} MB | ${r.created.toLocaleString('en-US')} | ${s(r.seconds)} | ${r.rssBeforeMiB.toFixed(0)} | ${r.maxRssMiB.toFixed(0)} | JSON.parse alone: ${s(ghBase)} s | ≤ 10 s |`),
    ].join('\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
