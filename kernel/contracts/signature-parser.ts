/** Header names lower-cased, values as received (multi-value headers joined by ", "). */
export type HeaderMap = Record<string, string>;

/** What a signature header says, parsed without verifying anything. */
export interface SignatureBreakdown {
  scheme: string;
  /** Seconds since the epoch, when the scheme carries one. */
  timestamp: number | null;
  /** Nonce or message id, when the scheme carries one. */
  nonce: string | null;
  /** Number of signatures in the header(s). */
  signature_count: number;
  /** Algorithm or version tag of each signature, e.g. `v1`, `sha256`. */
  versions: string[];
  /** The header(s) the breakdown was read from. */
  headers: string[];
}

/**
 * Kind `signature-parser`: decides whether a webhook's headers use its scheme and parses them.
 * Parsers are tried by ascending `order`; the first that matches names the capture's kind.
 */
export interface SignatureParser {
  /** The `signature_kind` this parser names. */
  readonly kind: string;
  /** Lower runs first; SPEC's order is payments 10, github 20, standard 30, generic 1000. */
  readonly order: number;
  matches(headers: HeaderMap): boolean;
  /** The breakdown, or null when the scheme has nothing to parse (generic). */
  parse(headers: HeaderMap): SignatureBreakdown | null;
}
