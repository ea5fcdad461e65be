import { open, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import type { TrafficRecord, WebhookCapture } from '../../kernel/domain/index.js';
import type { AgentDataRepo } from '../store/repositories/agent-data.js';
import type { ChangeFeed } from '../store/repositories/change-versions.js';

/** What one sync run did. */
export interface SyncReport {
  imported: { traffic: number; webhooks: number };
  /** Lines that were not valid JSON records (a crash mid-write tears the last line), skipped. */
  skipped: { file: string; offset: number; reason: string }[];
}

type Kind = 'traffic' | 'webhooks';

/**
 * Imports the data volume's JSONL files into the database, idempotent by id. It remembers how far
 * it read each file and reads only what was appended since; a line still being written (no
 * newline yet) waits for the next run; a line that is not a valid record is skipped and
 * reported. When webhooks are deleted from the database (`webhooks` topic), it re-reads the
 * webhook files from the start, so a capture whose line remains comes back (SPEC replay rule 5).
 * @public
 */
export class SyncLayer {
  readonly #offsets = new Map<string, number>();
  #running: Promise<SyncReport> | null = null;
  #timer: NodeJS.Timeout | null = null;
  #pendingSince: number | null = null;

  constructor(
    private readonly dataDir: string,
    private readonly data: AgentDataRepo,
    changes: ChangeFeed,
    private readonly logger: Logger,
  ) {
    changes.on('change', (_tenant, topic) => {
      if (topic === 'webhooks') for (const key of this.#offsets.keys()) if (key.startsWith('webhooks/')) this.#offsets.set(key, 0);
    });
  }

  /** Seconds since the oldest line this layer saw but has not imported (0 when caught up). */
  lagSeconds(): number {
    return this.#pendingSince === null ? 0 : (Date.now() - this.#pendingSince) / 1000;
  }

  /** One pass over every file; concurrent callers share the pass in progress. */
  runOnce(): Promise<SyncReport> {
    this.#running ??= this.#pass().finally(() => (this.#running = null));
    return this.#running;
  }

  start(ms = 1000): void {
    this.#timer ??= setInterval(() => {
      this.runOnce().catch((err: unknown) => this.logger.warn({ err: (err as Error).message }, 'sync run failed; retrying'));
    }, ms);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }

  async #pass(): Promise<SyncReport> {
    const report: SyncReport = { imported: { traffic: 0, webhooks: 0 }, skipped: [] };
    for (const kind of ['traffic', 'webhooks'] as const) {
      let files: string[];
      try {
        files = (await readdir(path.join(this.dataDir, kind))).filter((f) => f.endsWith('.jsonl'));
      } catch {
        continue;
      }
      for (const file of files) await this.#syncFile(kind, file, report);
    }
    for (const s of report.skipped) this.logger.warn(s, 'sync skipped a line that is not a valid record');
    return report;
  }

  async #syncFile(kind: Kind, file: string, report: SyncReport): Promise<void> {
    const key = `${kind}/${file}`;
    const full = path.join(this.dataDir, kind, file);
    let from = this.#offsets.get(key) ?? 0;
    const size = (await stat(full)).size;
    if (size < from) from = 0; // the file was truncated or replaced: start over
    if (size === from) return;
    const fh = await open(full, 'r');
    try {
      const chunkSize = 4 * 1024 * 1024;
      let carry = Buffer.alloc(0);
      let position = from;
      while (position < size) {
        const buf = Buffer.allocUnsafe(Math.min(chunkSize, size - position));
        const { bytesRead } = await fh.read(buf, 0, buf.length, position);
        if (!bytesRead) break;
        position += bytesRead;
        const data = carry.length ? Buffer.concat([carry, buf.subarray(0, bytesRead)]) : buf.subarray(0, bytesRead);
        const lastNewline = data.lastIndexOf(0x0a);
        if (lastNewline === -1) {
          carry = data;
          continue;
        }
        const lineStart = position - data.length;
        await this.#importLines(kind, key, data.subarray(0, lastNewline + 1), lineStart, report);
        this.#offsets.set(key, lineStart + lastNewline + 1);
        carry = data.subarray(lastNewline + 1);
      }
      if (carry.length) this.#pendingSince ??= Date.now();
      else this.#pendingSince = null;
    } finally {
      await fh.close();
    }
  }

  async #importLines(kind: Kind, key: string, bytes: Buffer, offset: number, report: SyncReport): Promise<void> {
    const byTenant = new Map<string, (TrafficRecord | WebhookCapture)[]>();
    let at = offset;
    for (const line of bytes.toString('utf8').split('\n')) {
      const lineOffset = at;
      at += Buffer.byteLength(line) + 1;
      if (!line) continue;
      let record: TrafficRecord | WebhookCapture;
      try {
        record = JSON.parse(line) as TrafficRecord | WebhookCapture;
        if (!record || typeof record.id !== 'string' || typeof record.tenant !== 'string' || typeof record.service_id !== 'string') throw new Error('missing id, tenant or service_id');
      } catch (err) {
        report.skipped.push({ file: key, offset: lineOffset, reason: (err as Error).message.slice(0, 120) });
        continue;
      }
      const list = byTenant.get(record.tenant) ?? byTenant.set(record.tenant, []).get(record.tenant)!;
      list.push(record);
    }
    for (const [tenant, records] of byTenant) {
      if (kind === 'traffic') report.imported.traffic += await this.data.importTraffic(tenant, records as TrafficRecord[]);
      else report.imported.webhooks += await this.data.importWebhooks(tenant, records as WebhookCapture[]);
    }
  }
}
