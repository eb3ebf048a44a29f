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

import type { ErrorModel, IcebergErrorResponse } from './schemas/error-model.js'

export type { IcebergErrorResponse }

export interface ErrorDef {
  /** Stable forever: clients, dashboards and docs/errors.md key on it. */
  readonly code: string
  readonly status: number
  /** The Iceberg exception type the body names (`ErrorModel.type`). */
  readonly type: string
  /** When iceguard answers with it; docs/errors.md carries the same line. */
  readonly when: string
}

function def (code: string, status: number, type: string, when: string): ErrorDef {
  return Object.freeze({ code: `GATE_ERR_${code}`, status, type, when })
}

/**
 * Every error iceguard produces, on the Iceberg routes, the admin API, the embedded catalog and
 * the CLI. docs/errors.md lists the same entries; test/contract/error-catalogue.test.ts keeps
 * the two in step.
 */
export const ERRORS = Object.freeze({
  BAD_REQUEST: def('BAD_REQUEST', 400, 'BadRequestException',
    'The request cannot be read or names something wrongly: an unreadable body, a bad parameter, a write whose tables do not match its path, an override token that does not verify.'),
  MALFORMED_JSON: def('MALFORMED_JSON', 400, 'BadRequestException',
    'The body is not valid JSON.'),
  MALFORMED_HTTP: def('MALFORMED_HTTP', 400, 'BadRequestException',
    'The bytes on a connection are not an HTTP/1.1 request iceguard can read (a bad request line, header or body framing); the answer closes the connection and nothing was forwarded.'),
  BASE_TOO_LARGE: def('BASE_TOO_LARGE', 400, 'BadRequestException',
    'The metadata of a table a commit changes is larger than the gate reads whole (`--upstream-max-response`); nothing was committed, and a retry cannot help until the limit is raised.'),
  ILLEGAL_ARGUMENT: def('ILLEGAL_ARGUMENT', 400, 'IllegalArgumentException',
    'Embedded catalog: an update the table metadata cannot take (a current schema, spec or sort order that does not exist, a format downgrade), as Iceberg Java\'s metadata builder refuses it.'),
  VALIDATION: def('VALIDATION', 400, 'ValidationException',
    'The request is well formed but invalid: a change the embedded catalog cannot apply (where the reference catalog answers `ValidationException` too), an admin evolve or policy reload that breaks a rule; the message names every rule id.'),
  REFUSED: def('REFUSED', 400, 'IllegalArgumentException',
    'The gate refused a commit: the change it would make breaks a rule of the Iceberg spec or the policy; the message names every rule id, field and rule page. The type is the one the Java client raises as itself (Spark: "Unsupported table change: …"), where any other 400 reads "Malformed request: …".'),
  USAGE: def('USAGE', 400, 'BadRequestException',
    'CLI only: an unknown command or flag, an unreadable input file (exit code 3).'),
  NOT_AUTHORIZED: def('NOT_AUTHORIZED', 401, 'NotAuthorizedException',
    'Missing or wrong credentials.'),
  FORBIDDEN: def('FORBIDDEN', 403, 'ForbiddenException',
    'The caller may not do this here: an admin call without the admin token, registering a table where the policy does not allow it.'),
  NOT_FOUND: def('NOT_FOUND', 404, 'NotFoundException',
    'No route for this path.'),
  NO_SUCH_NAMESPACE: def('NO_SUCH_NAMESPACE', 404, 'NoSuchNamespaceException',
    'Embedded catalog: the namespace named does not exist.'),
  NO_SUCH_TABLE: def('NO_SUCH_TABLE', 404, 'NoSuchTableException',
    'The table named does not exist.'),
  NO_SUCH_VIEW: def('NO_SUCH_VIEW', 404, 'NoSuchViewException',
    'Embedded catalog: the view named does not exist.'),
  METHOD_NOT_ALLOWED: def('METHOD_NOT_ALLOWED', 405, 'MethodNotAllowedException',
    'The path exists but not with this method (the `Allow` header lists the methods).'),
  REQUEST_TIMEOUT: def('REQUEST_TIMEOUT', 408, 'BadRequestException',
    'The request did not arrive in full in time; the answer closes the connection and nothing was forwarded.'),
  UNSUPPORTED_OPERATION: def('UNSUPPORTED_OPERATION', 406, 'UnsupportedOperationException',
    'Embedded catalog: an endpoint it does not offer (scan planning, remote signing).'),
  COMMIT_CONFLICT: def('COMMIT_CONFLICT', 409, 'CommitFailedException',
    'The commit\'s base is stale: a requirement does not hold against the table as it is now. The client retries on fresh metadata.'),
  ALREADY_EXISTS: def('ALREADY_EXISTS', 409, 'AlreadyExistsException',
    'Embedded catalog: a namespace, table or view of that name exists already.'),
  NAMESPACE_NOT_EMPTY: def('NAMESPACE_NOT_EMPTY', 409, 'NamespaceNotEmptyException',
    'Embedded catalog: a namespace to drop still holds tables, views or namespaces.'),
  BODY_TOO_LARGE: def('BODY_TOO_LARGE', 413, 'BadRequestException',
    'The body is larger than the configured limit; nothing was forwarded.'),
  UNSUPPORTED_MEDIA_TYPE: def('UNSUPPORTED_MEDIA_TYPE', 415, 'BadRequestException',
    'A body the gate must read arrived with a Content-Type or Content-Encoding it cannot read; nothing was forwarded.'),
  UNPROCESSABLE: def('UNPROCESSABLE', 422, 'UnprocessableEntityException',
    'Embedded catalog: a namespace properties update that sets and removes the same key.'),
  HEADERS_TOO_LARGE: def('HEADERS_TOO_LARGE', 431, 'BadRequestException',
    'The request\'s headers are larger than iceguard accepts; the answer closes the connection and nothing was forwarded.'),
  INTERNAL: def('INTERNAL', 500, 'ServiceFailureException',
    'A fault inside iceguard on a request that forwards nothing (admin API); the log has the details.'),
  UPSTREAM_BAD_RESPONSE: def('UPSTREAM_BAD_RESPONSE', 502, 'BadGatewayException',
    'The upstream sent an invalid or incomplete answer to a read; nothing was changed by iceguard.'),
  UPSTREAM_BAD_RESPONSE_COMMIT: def('UPSTREAM_BAD_RESPONSE_COMMIT', 502, 'CommitStateUnknownException',
    'A forwarded write\'s answer was lost or invalid, or iceguard failed after forwarding it: it may or may not have been applied; reload the table.'),
  UPSTREAM_UNAVAILABLE: def('UPSTREAM_UNAVAILABLE', 503, 'ServiceUnavailableException',
    'Nothing was forwarded: the upstream could not be reached or consulted (base metadata unavailable). Safe to retry after `Retry-After`.'),
  SHUTTING_DOWN: def('SHUTTING_DOWN', 503, 'ServiceUnavailableException',
    'Nothing was forwarded: this instance is shutting down. Safe to retry on a new connection.'),
  UPSTREAM_TIMEOUT: def('UPSTREAM_TIMEOUT', 504, 'GatewayTimeoutException',
    'The upstream did not answer a read in time.'),
  UPSTREAM_TIMEOUT_COMMIT: def('UPSTREAM_TIMEOUT_COMMIT', 504, 'CommitStateUnknownException',
    'The upstream did not answer a forwarded write in time: its outcome is unknown; reload the table.'),
  STORE_UNAVAILABLE: def('STORE_UNAVAILABLE', 503, 'ServiceUnavailableException',
    'Admin API: the decision store (SQLite file or PostgreSQL) could not be read or written. Safe to retry after `Retry-After`.')
})

interface GateErrorOptions {
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

type UpstreamFailure = 'unreachable' | 'timeout' | 'bad-response'

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
