import type { ScrubbedRecord } from './scrubber.js';

/** A JSON Schema (draft 2020-12) as plain data. */
export type JsonSchema = Record<string, unknown>;

/** A scrubbed record on its way through extraction; extractors keep per-record findings under `features[<plugin name>]`. */
export interface ExchangeRecord extends ScrubbedRecord {
  features?: Record<string, unknown>;
}

/** What the traffic says about one query parameter of an endpoint. */
export interface QueryParamPattern {
  /** Present on every request of the endpoint. */
  required: boolean;
  type: 'integer' | 'number' | 'boolean' | 'string';
  /** Distinct values seen. */
  distinct: number;
  /** Nearly every request carries a different value (a timestamp, nonce or cache buster): a mock should not match on it. */
  volatile: boolean;
  /** The values seen, when few and not volatile. */
  values?: string[];
}

/** What the traffic says about one endpoint (method and URI template) of a service. */
export interface EndpointPatterns {
  method: string;
  uri_template: string;
  /** Exchanges seen. */
  samples: number;
  query: Record<string, QueryParamPattern>;
  /** Schema of the JSON request bodies, null when none was JSON. */
  request_schema: JsonSchema | null;
  /** Schema of the JSON response bodies, by status code. */
  response_schemas: Record<string, JsonSchema>;
}

interface ExtractorBase {
  /**
   * Per record, pure, in batches in the worker pool (the pipeline's `normalize` stage): work
   * that needs one exchange at a time (splitting a path, a body's schema), kept on each record
   * under `features[<plugin name>]` for `extract`.
   */
  normalizeBatch?(records: readonly ExchangeRecord[]): ExchangeRecord[];
}

/** An extractor of URI templates. */
export interface TemplateExtractor extends ExtractorBase {
  readonly produces: 'uri_template';
  /**
   * Sees every record of a service at once (ids are told from words by their shape and by
   * cardinality across the traffic). One template per record, in order, e.g.
   * `/v1/customers/{customer_id}`, with the record's segment count; null when it has no opinion.
   */
  extract(records: readonly ExchangeRecord[]): (string | null)[];
}

/** An extractor of endpoint patterns (query parameters, body schemas). */
export interface PatternExtractor extends ExtractorBase {
  readonly produces: 'patterns';
  /** Every record of a service and its template (`templates[i]` is record i's); patterns per endpoint (method and template). */
  extract(records: readonly ExchangeRecord[], templates: readonly string[]): EndpointPatterns[];
}

/** Kind `extractor`: infers templates or patterns from many exchanges. */
export type Extractor = TemplateExtractor | PatternExtractor;
