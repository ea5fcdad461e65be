import { createHash, createHmac, randomBytes } from 'node:crypto';

const DIGITS = '0123456789';
const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const HEX_RE = /^[0-9a-f]+$|^[0-9A-F]+$/;
const HEX_LOWER = '0123456789abcdef';
const HEX_UPPER = '0123456789ABCDEF';
/** Values longer than this many characters get their keyed bytes in linear time (see #bytes). */
const LONG_VALUE = 1024;

/** A fresh pseudonym key: 32 random bytes, base64url. @public */
export function newPseudonymKey(): string {
  return randomBytes(32).toString('base64url');
}

/** The Luhn check digit that completes `payload` (digits only). @public */
export function luhnCheckDigit(payload: string): number {
  let sum = 0;
  for (let i = payload.length - 1, double = true; i >= 0; i--, double = !double) {
    let d = payload.charCodeAt(i) - 48;
    if (double && (d *= 2) > 9) d -= 9;
    sum += d;
  }
  return (10 - (sum % 10)) % 10;
}

/** True when a digit string passes the Luhn check. @public */
export function luhnValid(digits: string): boolean {
  return digits.length > 1 && luhnCheckDigit(digits.slice(0, -1)) === digits.charCodeAt(digits.length - 1) - 48;
}

/** ISO 13616 check: the IBAN (no spaces, upper case) moved and read as a number, mod 97 = 1. @public */
export function ibanValid(iban: string): boolean {
  return /^[A-Z]{2}\d{2}[A-Z0-9]{8,30}$/.test(iban) && ibanRemainder(iban.slice(4) + iban.slice(0, 4)) === 1;
}

function ibanRemainder(text: string): number {
  let rem = 0;
  for (const ch of text) {
    const v = ch >= 'A' ? ch.charCodeAt(0) - 55 : ch.charCodeAt(0) - 48;
    rem = v > 9 ? (rem * 100 + v) % 97 : (rem * 10 + v) % 97;
  }
  return rem;
}

/**
 * Deterministic, format-preserving pseudonyms keyed per tenant: the same value always maps to
 * the same pseudonym under one key (so references between mocks still line up), a different
 * key gives unrelated ones, and the key cannot be recovered from them. Letters stay letters of
 * the same case, digits stay digits, everything else stays put; cards keep their first two
 * digits and pass Luhn, IBANs keep their country and pass mod 97, e-mails stay e-mails.
 * Pure: safe to use in worker threads.
 * @public
 */
export class Pseudonymizer {
  static readonly #byKey = new Map<string, Pseudonymizer>();
  readonly #key: Buffer;
  /** Past pseudonyms by kind, then value (nested, so a lookup builds no key string). */
  readonly #memo = new Map<string, Map<string, string>>();
  #memoSize = 0;

  /** The pseudonymizer of a key, shared by every scrubber of this thread (and its memory of past values). */
  static for(key: string): Pseudonymizer {
    let p = Pseudonymizer.#byKey.get(key);
    if (!p) {
      if (Pseudonymizer.#byKey.size >= 16) Pseudonymizer.#byKey.clear();
      Pseudonymizer.#byKey.set(key, (p = new Pseudonymizer(key)));
    }
    return p;
  }

  constructor(key: string) {
    this.#key = Buffer.from(key, 'base64url');
    if (this.#key.length < 16) throw new Error('a pseudonym key needs at least 16 bytes');
  }

  /** `n` keyed bytes for (`kind`, `value`); `round` varies them when a result must be redrawn. */
  #bytes(kind: string, value: string, n: number, round: number): Uint8Array {
    // A block per 32 bytes, each an HMAC of the whole value, costs n²/32: past LONG_VALUE the
    // bytes are SHAKE256 of one HMAC instead (linear). Shorter values keep the pseudonyms they had.
    if (n > LONG_VALUE) {
      const seed = createHmac('sha256', this.#key).update(`${kind}\0${round}\0long\0${value}`).digest();
      return createHash('shake256', { outputLength: n }).update(seed).digest();
    }
    const out = new Uint8Array(n);
    for (let block = 0, at = 0; at < n; block++) {
      const digest = createHmac('sha256', this.#key).update(`${kind}\0${round}\0${block}\0${value}`).digest();
      out.set(digest.subarray(0, Math.min(digest.length, n - at)), at);
      at += digest.length;
    }
    return out;
  }

  #memoized(kind: string, value: string, make: (round: number) => string): string {
    let byValue = this.#memo.get(kind);
    if (!byValue) this.#memo.set(kind, (byValue = new Map()));
    let out = byValue.get(value);
    if (out === undefined) {
      // A pseudonym equal to its input would leave the value in place: draw again.
      for (let round = 0; (out = make(round)) === value && round < 8; round++);
      if (++this.#memoSize > 50_000) {
        this.#memo.clear();
        this.#memoSize = 0;
      }
      (this.#memo.get(kind) ?? this.#memo.set(kind, new Map()).get(kind)!).set(value, out);
    }
    return out;
  }

  /**
   * Same length and character classes; a hex value (8 or more hex digits, letters of one case)
   * stays hex. The first `keep` characters stay as they are (a token's `sk_live_` prefix).
   */
  text(value: string, keep = 0): string {
    return this.#memoized(`text${keep}`, value, (round) => this.#shape('text', value, round, keep));
  }

  #shape(kind: string, value: string, round: number, keep: number): string {
    const bytes = this.#bytes(kind, value, value.length, round);
    const rest = keep ? value.slice(keep) : value;
    const hex = rest.length >= 8 && HEX_RE.test(rest) && /\d/.test(rest) && /[a-fA-F]/.test(rest) ? (/[A-F]/.test(rest) ? HEX_UPPER : HEX_LOWER) : null;
    let out = value.slice(0, keep);
    for (let i = keep; i < value.length; i++) {
      const c = value[i]!;
      const b = bytes[i]!;
      if (hex) out += hex[b % 16];
      else if (c >= '0' && c <= '9') out += DIGITS[b % 10];
      else if (c >= 'a' && c <= 'z') out += LOWER[b % 26];
      else if (c >= 'A' && c <= 'Z') out += UPPER[b % 26];
      else out += c;
    }
    return out;
  }

  /** Digits replaced, everything else (separators, `+`) kept. */
  digits(value: string): string {
    return this.#memoized('digits', value, (round) => {
      const bytes = this.#bytes('digits', value, value.length, round);
      return value.replace(/\d/g, (_d, i: number) => DIGITS[bytes[i]! % 10]!);
    });
  }

  /** A card number: first two digits (the network) and separators kept, a Luhn-valid rest. */
  card(value: string): string {
    return this.#memoized('card', value, (round) => {
      const digits = value.replace(/\D/g, '');
      const bytes = this.#bytes('card', digits, digits.length, round);
      let body = digits.slice(0, 2);
      for (let i = 2; i < digits.length - 1; i++) body += DIGITS[bytes[i]! % 10];
      const full = body + luhnCheckDigit(body);
      let at = 0;
      return value.replace(/\d/g, () => full[at++]!);
    });
  }

  /** An IBAN: country kept, body pseudonymised by class, check digits recomputed. Spacing kept. */
  iban(value: string): string {
    return this.#memoized('iban', value, (round) => {
      const compact = value.replace(/\s/g, '').toUpperCase();
      const body = this.#shape('iban', compact.slice(4), round, 0);
      const check = String(98 - ibanRemainder(`${body}${compact.slice(0, 2)}00`)).padStart(2, '0');
      const full = compact.slice(0, 2) + check + body;
      let at = 0;
      return value.replace(/\S/g, () => full[at++]!);
    });
  }

  /** An e-mail address: the local part and every domain label but the top-level one, by class. */
  email(value: string): string {
    return this.#memoized('email', value, (round) => {
      const at = value.lastIndexOf('@');
      const labels = value.slice(at + 1).split('.');
      const tld = labels.pop()!;
      return `${this.#shape('email-local', value.slice(0, at), round, 0)}@${[...labels.map((l) => this.#shape('email-domain', l, round, 0)), tld].join('.')}`;
    });
  }

  /** An IPv6 address: every hex digit replaced by a hex digit, colons kept. */
  ipv6(value: string): string {
    return this.#memoized('ipv6', value, (round) => {
      const bytes = this.#bytes('ipv6', value.toLowerCase(), value.length, round);
      return value.replace(/[0-9a-f]/gi, (_c, i: number) => HEX_LOWER[bytes[i]! % 16]!);
    });
  }

  /** An IPv4 address: four keyed octets. */
  ipv4(value: string): string {
    return this.#memoized('ipv4', value, (round) => Array.from(this.#bytes('ipv4', value, 4, round)).join('.'));
  }
}
