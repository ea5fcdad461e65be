import { randomFillSync } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

// Random bytes are drawn 8 KiB at a time and each is used once (as crypto.randomUUID caches
// them): a call to the CSPRNG per id cost 9 µs, most of an import's id minting.
const pool = Buffer.alloc(8192);
let next = pool.length;

function randomByte(): number {
  if (next === pool.length) {
    randomFillSync(pool);
    next = 0;
  }
  return pool[next++]!;
}

/**
 * `n` random base62 characters, unbiased (bytes past the largest multiple of 62 are dropped).
 * @public
 */
export function randomBase62(n: number): string {
  let out = '';
  while (out.length < n) {
    const b = randomByte();
    if (b < 248) out += ALPHABET[b % 62];
  }
  return out;
}

/** Id prefixes, one per resource type (DECISIONS "Identifiers and time"). @public */
export type IdPrefix = 'svc' | 'mock' | 'job' | 'drift' | 'sess' | 'prop' | 'eval' | 'key' | 'act' | 'req' | 'tr';

/** A new id: the type prefix, an underscore and 20 base62 characters. @public */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase62(20)}`;
}

/** ISO-8601 UTC with milliseconds. @public */
export function nowIso(): string {
  return new Date().toISOString();
}
