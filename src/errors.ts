/**
 * The error catalogue: every error iceguard itself produces, in one place.
 *
 * Each entry has a stable `GATE_ERR_*` code, the HTTP status and the Iceberg exception `type`.
 * Status codes steer clients (Iceberg Java `ErrorHandlers`): 400 is a final, clean failure;
 * 409 `CommitFailedException` may be retried; 500/502/503/504 on a commit mean "state unknown",
 * so they are used only once a commit has been forwarded. 503 with `Retry-After` is what a Java
 * client retries safely, so it marks "upstream unreachable, nothing forwarded".
 * Bodies follow the REST spec's `IcebergErrorResponse`: `{"error":{"message","type","code","stack"?}}`
 * with `code` equal to the HTTP status (Java keys on the body's code, not the status line).
 */

export interface ErrorDef {
  readonly code: string
  readonly status: number
  readonly type: string
}

function def (code: string, status: number, type: string): ErrorDef {
  return Object.freeze({ code: `GATE_ERR_${code}`, status, type })
}

export const ERRORS = Object.freeze({
  /** Malformed request: unreadable body, bad parameter. */
  BAD_REQUEST: def('BAD_REQUEST', 400, 'BadRequestException'),
  /** The body is not valid JSON. */
  MALFORMED_JSON: def('MALFORMED_JSON', 400, 'BadRequestException'),
  /** The request is well formed but breaks a rule (spec or policy). */
  VALIDATION: def('VALIDATION', 400, 'ValidationException'),
  /** Missing or wrong credentials (admin API). */
  NOT_AUTHORIZED: def('NOT_AUTHORIZED', 401, 'NotAuthorizedException'),
  FORBIDDEN: def('FORBIDDEN', 403, 'ForbiddenException'),
  NOT_FOUND: def('NOT_FOUND', 404, 'NotFoundException'),
  /** Embedded catalog: the namespace, table or view named does not exist. */
  NO_SUCH_NAMESPACE: def('NO_SUCH_NAMESPACE', 404, 'NoSuchNamespaceException'),
  NO_SUCH_TABLE: def('NO_SUCH_TABLE', 404, 'NoSuchTableException'),
  NO_SUCH_VIEW: def('NO_SUCH_VIEW', 404, 'NoSuchViewException'),
  METHOD_NOT_ALLOWED: def('METHOD_NOT_ALLOWED', 405, 'MethodNotAllowedException'),
  /** Embedded catalog: an endpoint it does not offer (scan planning, remote signing). */
  UNSUPPORTED_OPERATION: def('UNSUPPORTED_OPERATION', 406, 'UnsupportedOperationException'),
  /**
   * The commit's base is stale: a requirement failed (the gate's view of the table, or the embedded
   * catalog's table), or a snapshot is behind the table. The client retries on fresh metadata.
   */
  COMMIT_CONFLICT: def('COMMIT_CONFLICT', 409, 'CommitFailedException'),
  /** Embedded catalog: a namespace, table or view of that name exists already. */
  ALREADY_EXISTS: def('ALREADY_EXISTS', 409, 'AlreadyExistsException'),
  /** Embedded catalog: a namespace to drop still holds tables, views or namespaces. */
  NAMESPACE_NOT_EMPTY: def('NAMESPACE_NOT_EMPTY', 409, 'NamespaceNotEmptyException'),
  BODY_TOO_LARGE: def('BODY_TOO_LARGE', 413, 'BadRequestException'),
  UNSUPPORTED_MEDIA_TYPE: def('UNSUPPORTED_MEDIA_TYPE', 415, 'BadRequestException'),
  /** Embedded catalog: a namespace properties update that sets and removes the same key. */
  UNPROCESSABLE: def('UNPROCESSABLE', 422, 'UnprocessableEntityException'),
  /** A fault inside iceguard, before anything was forwarded. */
  INTERNAL: def('INTERNAL', 500, 'ServiceFailureException'),
  /** The upstream sent an invalid or incomplete answer to a read (nothing changed by us). */
  UPSTREAM_BAD_RESPONSE: def('UPSTREAM_BAD_RESPONSE', 502, 'BadGatewayException'),
  /** As above, after a write was forwarded: it may or may not have been applied. */
  UPSTREAM_BAD_RESPONSE_COMMIT: def('UPSTREAM_BAD_RESPONSE_COMMIT', 502, 'CommitStateUnknownException'),
  /** Nothing was forwarded: the upstream could not be reached. Safe to retry (`Retry-After`). */
  UPSTREAM_UNAVAILABLE: def('UPSTREAM_UNAVAILABLE', 503, 'ServiceUnavailableException'),
  /** Nothing was forwarded: this instance is shutting down. Safe to retry on a new connection. */
  SHUTTING_DOWN: def('SHUTTING_DOWN', 503, 'ServiceUnavailableException'),
  /** Admin API: the decision store (SQLite file or PostgreSQL) could not be read or written. Retry later. */
  STORE_UNAVAILABLE: def('STORE_UNAVAILABLE', 503, 'ServiceUnavailableException'),
  /** The upstream did not answer a read in time. */
  UPSTREAM_TIMEOUT: def('UPSTREAM_TIMEOUT', 504, 'GatewayTimeoutException'),
  /** The upstream did not answer a forwarded write in time: its outcome is unknown. */
  UPSTREAM_TIMEOUT_COMMIT: def('UPSTREAM_TIMEOUT_COMMIT', 504, 'CommitStateUnknownException')
})

export type ErrorName = keyof typeof ERRORS

export interface ErrorModel {
  message: string
  type: string
  code: number
  stack?: string[]
}

export interface IcebergErrorResponse {
  error: ErrorModel
}

export interface GateErrorOptions {
  /** Per-violation lines; pyiceberg drops them, so `message` must stand alone. */
  readonly details?: readonly string[]
  /** Extra response headers, e.g. `Retry-After`. */
  readonly headers?: Readonly<Record<string, string>>
  readonly cause?: unknown
}

/** An error iceguard answers with; carries everything needed to render the response. */
export class GateError extends Error {
  readonly code: string
  readonly statusCode: number
  readonly icebergType: string
  readonly details: readonly string[] | undefined
  readonly headers: Readonly<Record<string, string>>

  constructor (definition: ErrorDef, message: string, options: GateErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'GateError'
    this.code = definition.code
    this.statusCode = definition.status
    this.icebergType = definition.type
    this.details = options.details
    this.headers = options.headers ?? {}
  }

  toResponse (): IcebergErrorResponse {
    return errorBody(this.statusCode, this.icebergType, this.message, this.details)
  }
}

export type UpstreamFailure = 'unreachable' | 'timeout' | 'bad-response'

/** A transport failure talking to the upstream; `sent` says whether the request left. */
export class UpstreamError extends GateError {
  readonly sent: boolean
  readonly failure: UpstreamFailure

  constructor (definition: ErrorDef, message: string, sent: boolean, failure: UpstreamFailure, options: GateErrorOptions = {}) {
    super(definition, message, options)
    this.name = 'UpstreamError'
    this.sent = sent
    this.failure = failure
  }
}

export function errorBody (status: number, type: string, message: string, stack?: readonly string[]): IcebergErrorResponse {
  const error: ErrorModel = { message, type, code: status }
  if (stack !== undefined && stack.length > 0) error.stack = [...stack]
  return { error }
}

/** Serialised ErrorModel for raw `node:http` responses. */
export function renderError (err: GateError): { statusCode: number, headers: Record<string, string>, body: string } {
  const body = JSON.stringify(err.toResponse())
  return {
    statusCode: err.statusCode,
    headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), ...err.headers },
    body
  }
}

/**
 * Names a transport error for the client: `sent` is whether the request reached the upstream
 * socket, `commit` whether it was a write whose outcome matters (then 502/504 say "state unknown").
 */
export function upstreamError (cause: unknown, sent: boolean, commit: boolean, retryAfterSeconds: number): UpstreamError {
  const code = typeof cause === 'object' && cause !== null && 'code' in cause ? String((cause as { code: unknown }).code) : ''
  const detail = cause instanceof Error ? cause.message : String(cause)
  if (!sent) {
    return new UpstreamError(ERRORS.UPSTREAM_UNAVAILABLE,
      `The upstream catalog is unreachable (${code || detail}); the request was not forwarded and can be retried`,
      false, 'unreachable', { headers: { 'retry-after': String(retryAfterSeconds) }, cause })
  }
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    return commit
      ? new UpstreamError(ERRORS.UPSTREAM_TIMEOUT_COMMIT, 'The upstream catalog did not answer the forwarded commit in time; the commit state is unknown', true, 'timeout', { cause })
      : new UpstreamError(ERRORS.UPSTREAM_TIMEOUT, 'The upstream catalog did not answer in time', true, 'timeout', { cause })
  }
  return commit
    ? new UpstreamError(ERRORS.UPSTREAM_BAD_RESPONSE_COMMIT, `The upstream catalog gave no valid answer to the forwarded commit (${code || detail}); the commit state is unknown`, true, 'bad-response', { cause })
    : new UpstreamError(ERRORS.UPSTREAM_BAD_RESPONSE, `The upstream catalog gave no valid answer (${code || detail})`, true, 'bad-response', { cause })
}
