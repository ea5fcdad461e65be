/**
 * Every error the service can answer with, in one table keyed by its stable `error_code`.
 * Callers branch on `error_code`; docs/errors.md documents each one (a test pins that).
 * @public
 */
export const ERRORS = {
  validation_error: { status: 422, message: 'The request is invalid.' },
  unauthenticated: { status: 401, message: 'Send a valid API key in the X-Service-Api-Key header.' },
  tenant_isolation: { status: 403, message: "The request names a tenant other than this deployment's." },
  feature_gated: { status: 403, message: 'Your plan does not include this feature.' },
  not_found: { status: 404, message: 'Not found.' },
  method_not_allowed: { status: 405, message: 'This path does not accept that method.' },
  conflict: { status: 409, message: 'The request conflicts with an existing resource.' },
  invalid_state: { status: 409, message: 'The resource is not in a state that allows this.' },
  scrubbing_required: { status: 409, message: 'This operation needs scrubbed data.' },
  idempotency_conflict: { status: 409, message: 'This Idempotency-Key was already used for a different request.' },
  payload_too_large: { status: 413, message: 'The request body is larger than this route accepts.' },
  unsupported_media_type: { status: 415, message: 'Send the body as application/json.' },
  rate_limited: { status: 429, message: 'Rate limit exceeded.' },
  internal_error: { status: 500, message: 'Internal error.' },
  not_implemented: { status: 501, message: 'This endpoint is part of the API contract but is not built yet.' },
  transitioning: { status: 503, message: 'The service is transitioning from LEARN to MOCK; retry shortly.' },
  replay_target_blocked: { status: 400, message: 'The replay target is refused by the safety guard.' },
  replay_dns_failed: { status: 400, message: 'The replay target did not resolve.' },
  replay_upstream_error: { status: 502, message: 'The replay target was unreachable, timed out, or failed.' },
  no_mock_match: { status: 404, message: 'No mock in the library matches this request.' },
  upstream_unavailable: { status: 502, message: 'The upstream service could not be reached.' },
} as const satisfies Record<string, { status: number; message: string }>;

/** A stable `error_code`. @public */
export type ErrorCode = keyof typeof ERRORS;

/** The JSON error body every route answers with. @public */
export interface ErrorBody {
  detail: string;
  error_code: ErrorCode;
  feature?: string;
  [extra: string]: unknown;
}

/**
 * An error that maps onto the error table. Throw it anywhere; the HTTP error middleware and the
 * agent turn it into `{detail, error_code}` with the table's status.
 * @public
 */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly extra: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(
    code: ErrorCode,
    detail?: string,
    opts: { extra?: Record<string, unknown>; headers?: Record<string, string> } = {},
  ) {
    super(detail ?? ERRORS[code].message);
    this.name = 'AppError';
    this.code = code;
    this.status = ERRORS[code].status;
    this.extra = opts.extra ?? {};
    this.headers = opts.headers ?? {};
  }

  /** The JSON body for this error. */
  toBody(): ErrorBody {
    return { detail: this.message, error_code: this.code, ...this.extra };
  }
}

/** True when `err` is an {@link AppError}. @public */
export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}
