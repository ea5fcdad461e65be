import { writeSync } from 'node:fs';
import { mkdir, open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';

/** Which write failed: making the folder, opening the file, or writing to it. */
export type IoStep = 'mkdir' | 'open' | 'write';

/**
 * Append-only JSONL files in one folder of the data volume, one per service. Each append is a
 * single `write` on a descriptor opened with O_APPEND, so lines from concurrent processes never
 * interleave. A failure is reported to `onError` and the handle is dropped, to be reopened by
 * the next append; it never throws to the caller.
 * @public
 */
export class JsonlFiles {
  readonly #handles = new Map<string, Promise<FileHandle>>();

  constructor(
    readonly dir: string,
    private readonly onError: (step: IoStep, err: Error) => void,
  ) {}

  /** File of a service (ids are validated by callers to `[A-Za-z0-9_-]`). */
  file(serviceId: string): string {
    return path.join(this.dir, `${serviceId}.jsonl`);
  }

  #handle(serviceId: string): Promise<FileHandle> {
    let h = this.#handles.get(serviceId);
    if (!h) {
      h = (async () => {
        try {
          await mkdir(this.dir, { recursive: true });
        } catch (err) {
          throw Object.assign(err as Error, { step: 'mkdir' as IoStep });
        }
        try {
          return await open(this.file(serviceId), 'a');
        } catch (err) {
          throw Object.assign(err as Error, { step: 'open' as IoStep });
        }
      })();
      this.#handles.set(serviceId, h);
      h.catch(() => this.#handles.delete(serviceId));
    }
    return h;
  }

  /**
   * Appends complete lines in one write; resolves true once written, false on failure. `sync`
   * writes on this thread (a small append to the page cache costs microseconds, far less than
   * a round trip through libuv's pool): webhook captures use it; batched traffic does not.
   */
  async append(serviceId: string, text: string, opts: { sync?: boolean } = {}): Promise<boolean> {
    let handle: FileHandle;
    try {
      handle = await this.#handle(serviceId);
    } catch (err) {
      this.onError((err as { step?: IoStep }).step ?? 'open', err as Error);
      return false;
    }
    try {
      const bytes = Buffer.from(text, 'utf8');
      const bytesWritten = opts.sync ? writeSync(handle.fd, bytes, 0, bytes.length) : (await handle.write(bytes, 0, bytes.length)).bytesWritten;
      if (bytesWritten !== bytes.length) throw new Error(`short write: ${bytesWritten} of ${bytes.length} bytes`);
      return true;
    } catch (err) {
      this.onError('write', err as Error);
      this.#handles.delete(serviceId);
      handle.close().catch(() => undefined);
      return false;
    }
  }

  async close(): Promise<void> {
    const handles = [...this.#handles.values()];
    this.#handles.clear();
    await Promise.all(handles.map((h) => h.then((fh) => fh.close()).catch(() => undefined)));
  }
}

/**
 * Traffic recording off the response path: lines queue in memory and each service's queue is
 * flushed in one write on the next tick (or sooner when it grows large), so no response waits
 * on the disk.
 * @public
 */
export class BatchedRecorder {
  readonly #queues = new Map<string, string[]>();
  #scheduled = false;
  #flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly files: JsonlFiles,
    private readonly logger: Logger,
    private readonly maxQueued = 10_000,
  ) {}

  record(serviceId: string, record: unknown): void {
    let q = this.#queues.get(serviceId);
    if (!q) this.#queues.set(serviceId, (q = []));
    if (q.length >= this.maxQueued) {
      this.logger.warn({ serviceId }, 'traffic queue full; dropping a record');
      return;
    }
    q.push(`${JSON.stringify(record)}\n`);
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(() => {
        this.#scheduled = false;
        void this.flush();
      });
    }
  }

  /** Writes everything queued; resolves when it is on disk (tests and shutdown wait on this). */
  flush(): Promise<void> {
    this.#flushing = this.#flushing.then(async () => {
      const batches = [...this.#queues];
      this.#queues.clear();
      await Promise.all(batches.map(([serviceId, lines]) => this.files.append(serviceId, lines.join(''))));
    });
    return this.#flushing;
  }
}
