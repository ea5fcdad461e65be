import type { BodyMatcher, RecordedBody, RecordedHeaders } from '../domain/index.js';

/**
 * A mock entry as an importer proposes it: what request it answers and with what. The seed
 * pipeline binds it to a service and writes it as a `MockEntry`.
 * @public
 */
export interface MockDraft {
  method: string;
  /** A concrete path as the document names it, e.g. `/v2/pets/1` (the service's base path is stripped later). */
  path: string;
  /** The path's template, e.g. `/v2/pets/{id}`; omit (or equal to `path`) when the path is exact. */
  uri_template?: string;
  /** Query parameters the request must carry with these values; null matches any query. */
  query: Record<string, string[]> | null;
  body_matcher: BodyMatcher | null;
  response: { status: number; headers: RecordedHeaders; body: RecordedBody | null };
  /** Where in the document the entry came from, e.g. `log.entries[3]`. */
  origin: string;
  /** `host[:port]` the document says the request went to; importers with `binding: 'host'` must set it. */
  host?: string | null;
}

/** Something an importer left out, and why. @public */
export interface ImportSkip {
  where: string;
  why: string;
}

/** What an importer reports while it reads, besides the drafts it yields. @public */
export interface ImportContext {
  /** The media type the document came as, lower-case without parameters (`application/json`, `application/yaml`, …). */
  mediaType: string;
  signal: AbortSignal;
  /** Reports an item of the document that becomes no entry, and why. */
  skip(where: string, why: string): void;
  /** Reports something the user should know that did not stop the entry (a truncated sample, an unresolved variable). */
  warn(text: string): void;
}

/**
 * Kind `importer`: reads a document (HAR, Postman collection, OpenAPI description, or whatever
 * format a plugin knows) and yields mock drafts as it goes, so a large document never has to sit
 * in memory whole. Bad input throws `AppError('validation_error', '<location>: <what is wrong>')`
 * naming the location in the document, e.g. `log.entries[17].response.status: …`.
 * @public
 */
export interface Importer {
  /** The format it reads; also its seed route, `POST /v1/seed/{format}`. Lower-case letters, digits and `-`. */
  readonly format: string;
  /** Media types it accepts, e.g. `application/json`; `+json` accepts any JSON-suffixed type. */
  readonly mediaTypes: readonly string[];
  /**
   * How drafts find their service: `host` = by the host each draft names (a HAR's URLs), the
   * caller's `service_id` only narrowing it; `service` = all go to the `service_id` the caller names.
   */
  readonly binding: 'host' | 'service';
  /**
   * True when drafts hold captured traffic (which may carry secrets or personal data): the seed
   * pipeline scrubs them unless asked not to. False when they are made up from a description
   * (OpenAPI examples and samples), which are stored as they are unless scrubbing is asked for.
   */
  readonly captured: boolean;
  read(source: AsyncIterable<Uint8Array>, ctx: ImportContext): AsyncIterable<MockDraft>;
}
