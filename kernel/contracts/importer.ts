/** A mock entry as an importer proposes it, before it has an id. */
export interface MockDraft {
  method: string;
  /** Concrete path, e.g. `/v1/customers/cus_1`. */
  path: string;
  /** URI template, e.g. `/v1/customers/{id}`, or null when the path is exact. */
  uri_template: string | null;
  query: Record<string, string> | null;
  response: {
    status: number;
    headers: Record<string, string>;
    body: string | { b64: string; size_bytes: number } | null;
  };
  /** Where in the document the entry came from, e.g. `log.entries[3]`. */
  origin: string;
  /** Host the entry was recorded against, when the document says (used to pick the service). */
  host?: string | null;
}

/** A finding that did not stop the import. */
export interface ImportSkip {
  where: string;
  why: string;
}

/** What an importer hands back: drafts to write, and what it skipped and why. */
export interface ImportOutcome {
  drafts: MockDraft[];
  skipped: ImportSkip[];
  warnings: string[];
}

/** Kind `importer`: turns a document into mock drafts. Throws AppError(validation_error) naming the location on bad input. */
export interface Importer {
  /** The format this importer reads, e.g. `har`, `postman`, `openapi`. */
  readonly format: string;
  /** Content types it accepts, e.g. `application/json`. */
  readonly mediaTypes: readonly string[];
  import(source: AsyncIterable<Uint8Array>, opts: { signal?: AbortSignal; onProgress?: (fraction: number) => void }): Promise<ImportOutcome>;
}
