/** What an id looks like, when a path segment looks like one; null for a word. */
export type SegmentShape = 'number' | 'uuid' | 'ulid' | 'hex' | 'prefixed' | 'token' | 'email';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ULID = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;
const HEX = /^(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{8,}$|^(?=[0-9A-F]*\d)(?=[0-9A-F]*[A-F])[0-9A-F]{8,}$/;
/** `cus_9s8d7f`, `ch-3Kx9`: a short lower-case type tag, then a body with a digit or a capital (so `gpg_keys` stays a word). */
const PREFIXED = /^[a-z]{1,12}[_-](?=[A-Za-z0-9]*[0-9A-Z])[A-Za-z0-9]{4,}$/;
const EMAIL = /^[^@\s/]+@[^@\s/]+\.[A-Za-z]{2,}$/;

/**
 * Lower-case words joined by `-` or `_`, each word maybe ending in a few digits, or a short
 * number between them (`enterprise-28-day`, `users-1-day`, `build2024`): a readable name, not a
 * generated token, however long.
 */
const WORDS = /^[a-z]+\d{0,4}(?:[_-](?:[a-z]+\d{0,4}|\d{1,4}))*$/;

/** True when a segment mixes letters and digits like a generated token (16+ characters). */
function looksGenerated(s: string): boolean {
  if (s.length < 16 || !/^[A-Za-z0-9_-]+$/.test(s)) return false;
  const digits = (s.match(/\d/g) ?? []).length;
  return digits >= 2 && /[A-Za-z]/.test(s) && !WORDS.test(s);
}

/** The id shape of one path segment as it is in the URI (percent-encoded), or null when it reads as a word. */
export function segmentShape(raw: string): SegmentShape | null {
  let s = raw;
  try {
    s = decodeURIComponent(raw);
  } catch {
    // not valid percent-encoding: judge it as it is
  }
  if (/^\d+$/.test(s)) return 'number';
  if (UUID.test(s)) return 'uuid';
  if (ULID.test(s)) return 'ulid';
  if (HEX.test(s)) return 'hex';
  if (PREFIXED.test(s)) return 'prefixed';
  if (EMAIL.test(s)) return 'email';
  if (looksGenerated(s)) return 'token';
  return null;
}

/** A path's segments as they are in the URI (the leading empty one dropped). */
export function pathSegments(uri: string): string[] {
  const q = uri.indexOf('?');
  return (q === -1 ? uri : uri.slice(0, q)).split('/').slice(1);
}
