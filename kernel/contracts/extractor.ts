/** A recorded exchange in the shape extractors read. */
export interface ExchangeSample {
  method: string;
  path: string;
  query: Record<string, string>;
  status: number;
  response_body: unknown;
}

/** Kind `extractor`: infers templates and patterns from many samples. */
export interface Extractor {
  /** What it produces, e.g. `uri_template` or `json_schema`. */
  readonly produces: string;
  extract(samples: readonly ExchangeSample[]): Record<string, unknown>;
}
