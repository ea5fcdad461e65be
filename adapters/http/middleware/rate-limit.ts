import { AppError } from '../../../kernel/errors.js';

/** Named buckets of SPEC's Limits table, per client IP per minute. */
export const BUCKETS = {
  global: 600,
  normalize: 10,
  finetune: 3,
  transition_start: 5,
  eval_run: 6,
  training_train: 3,
} as const;

export type BucketName = keyof typeof BUCKETS;

interface Window {
  start: number;
  current: number;
  previous: number;
}

/**
 * Sliding-window counters per (bucket, client): the previous fixed window's count, weighted by
 * how much of it still overlaps the sliding minute, plus the current window's count. Memory is
 * two numbers per client and bucket; state is per process, as SPEC says.
 * @public
 */
export class RateLimiter {
  readonly #windows = new Map<string, Window>();
  readonly #limits: Record<BucketName, number>;
  readonly #windowMs: number;
  #sweepAt = 0;

  constructor(opts: { limits?: Partial<Record<BucketName, number>>; windowMs?: number } = {}) {
    this.#limits = { ...BUCKETS, ...opts.limits };
    this.#windowMs = opts.windowMs ?? 60_000;
  }

  limit(bucket: BucketName): number {
    return this.#limits[bucket];
  }

  /** Counts one hit; throws 429 `rate_limited` naming the bucket when over its limit. */
  hit(bucket: BucketName, client: string, now = Date.now()): void {
    const limit = this.#limits[bucket];
    const key = `${bucket}\0${client}`;
    const size = this.#windowMs;
    const start = now - (now % size);
    let w = this.#windows.get(key);
    if (!w) {
      w = { start, current: 0, previous: 0 };
      this.#windows.set(key, w);
    } else if (w.start !== start) {
      w.previous = w.start === start - size ? w.current : 0;
      w.current = 0;
      w.start = start;
    }
    const weight = 1 - (now - start) / size;
    if (w.previous * weight + w.current >= limit) {
      const retry = Math.max(1, Math.ceil((size - (now - start)) / 1000));
      throw new AppError('rate_limited', `rate limit exceeded: ${bucket} (${limit} per minute)`, { headers: { 'Retry-After': String(retry) } });
    }
    w.current++;
    if (now > this.#sweepAt) this.#sweep(now);
  }

  #sweep(now: number): void {
    this.#sweepAt = now + this.#windowMs;
    for (const [key, w] of this.#windows) if (w.start < now - 2 * this.#windowMs) this.#windows.delete(key);
  }
}
