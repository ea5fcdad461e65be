import type { Logger } from 'pino';
import type { MockEntry } from '../../kernel/domain/index.js';
import type { AgentDataRepo, UnmatchedRow } from '../store/repositories/agent-data.js';
import type { MocksRepo } from '../store/repositories/mocks.js';
import type { NearMiss } from './library.js';

const MAX_SHAPES = 10_000;

/**
 * Mock hits and unmatched requests, counted in memory on the hot path and written to the
 * database once a second. While the database is away the counts wait (bounded) and go later.
 * @public
 */
export class AgentStats {
  #hits = new Map<string, { count: number; at: Date }>();
  #unmatched = new Map<string, UnmatchedRow>();
  #timer: NodeJS.Timeout | null = null;
  #flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly tenant: string,
    private readonly mocks: MocksRepo,
    private readonly data: AgentDataRepo,
    private readonly logger: Logger,
  ) {}

  hit(entry: MockEntry): void {
    const h = this.#hits.get(entry.id);
    if (h) {
      h.count++;
      h.at = new Date();
    } else this.#hits.set(entry.id, { count: 1, at: new Date() });
  }

  miss(serviceId: string, method: string, path: string, search: string, nearest: NearMiss[]): void {
    const key = `${serviceId} ${method} ${path}${search}`;
    const now = new Date().toISOString();
    const row = this.#unmatched.get(key);
    if (row) {
      row.count++;
      row.last_seen_at = now;
    } else if (this.#unmatched.size < MAX_SHAPES) {
      this.#unmatched.set(key, { service_id: serviceId, method, path, query: search.replace(/^\?/, ''), count: 1, first_seen_at: now, last_seen_at: now, hint: { nearest } });
    }
  }

  start(ms = 1000): void {
    this.#timer ??= setInterval(() => void this.flush(), ms);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }

  flush(): Promise<void> {
    this.#flushing = this.#flushing.then(async () => {
      const hits = this.#hits;
      const unmatched = this.#unmatched;
      this.#hits = new Map();
      this.#unmatched = new Map();
      try {
        await this.mocks.recordHits(this.tenant, hits);
      } catch (err) {
        this.logger.warn({ err: (err as Error).message }, 'could not store mock hits; keeping them for the next flush');
        for (const [id, h] of hits) {
          const now = this.#hits.get(id);
          this.#hits.set(id, now ? { count: now.count + h.count, at: now.at } : h);
        }
      }
      try {
        await this.data.addUnmatched(this.tenant, [...unmatched.values()]);
      } catch (err) {
        this.logger.warn({ err: (err as Error).message }, 'could not store unmatched requests; keeping them for the next flush');
        for (const [key, row] of unmatched) {
          const now = this.#unmatched.get(key);
          if (now) {
            now.count += row.count;
            now.first_seen_at = row.first_seen_at;
          } else if (this.#unmatched.size < MAX_SHAPES) this.#unmatched.set(key, row);
        }
      }
    });
    return this.#flushing;
  }
}
