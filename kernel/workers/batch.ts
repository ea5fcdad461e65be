/**
 * How a batch crosses between threads: one buffer holding the item count (4 bytes) and the
 * items as UTF-8 JSON. The buffer is moved, not copied, and the count can be read without
 * decoding, so progress is known before anyone parses the items.
 * @public
 */
export interface EncodedBatch {
  readonly buffer: ArrayBuffer;
  readonly count: number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Encodes items into a fresh buffer that may be moved to another thread. @public */
export function encodeBatch(items: readonly unknown[]): EncodedBatch {
  const json = JSON.stringify(items);
  const buffer = new ArrayBuffer(4 + Buffer.byteLength(json, 'utf8'));
  encoder.encodeInto(json, new Uint8Array(buffer, 4));
  new DataView(buffer).setUint32(0, items.length);
  return { buffer, count: items.length };
}

/** The item count of an encoded batch buffer. @public */
export function batchCount(buffer: ArrayBuffer): number {
  return new DataView(buffer).getUint32(0);
}

/** The items of an encoded batch. @public */
export function decodeBatch(buffer: ArrayBuffer): unknown[] {
  return JSON.parse(decoder.decode(new Uint8Array(buffer, 4))) as unknown[];
}
