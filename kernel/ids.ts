import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * `n` random base62 characters, unbiased (bytes past the largest multiple of 62 are dropped).
 * @public
 */
export function randomBase62(n: number): string {
  let out = '';
  while (out.length < n) {
    for (const b of randomBytes(n * 2)) {
      if (b < 248) out += ALPHABET[b % 62];
      if (out.length === n) break;
    }
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
