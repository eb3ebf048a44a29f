/**
 * What one upstream exchange means, whichever transport carries it (the fast lane's sockets, the
 * streaming forwarder, the buffered client): when a request is resent, how long a commit's answer
 * is held, and (src/errors.ts `upstreamError`) what a failure tells the client.
 *
 * - Resend once: only a GET or HEAD without a body, only on its first try, and only when the
 *   pooled socket it was written to turned out dead before any answer byte came back. A write is
 *   never resent: the upstream may have applied it.
 * - Commit hold: a commit's answer reaches the client whole or not at all (up to
 *   COMMIT_HOLD_LIMIT), so that an answer breaking off becomes 502/504 CommitStateUnknown instead
 *   of a cut connection, which Java reads as a plain failure and cleans up files a landed commit
 *   uses.
 * - Failures: nothing sent → 503 + Retry-After; sent and no complete answer → 502/504 (for a
 *   commit, CommitStateUnknown); answer already started → the client connection is cut.
 */
export { upstreamError } from '../errors.js'

/** Largest commit answer held back until complete; a larger one is streamed from there on. */
export const COMMIT_HOLD_LIMIT = 64 * 1024 * 1024

/** Failures of a pooled keep-alive socket that a request may be resent once after. */
const DEAD_SOCKET_CODES: ReadonlySet<string> = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE'])

/** Whether a request may be resent at all: a GET or HEAD without a body. */
export function isResendable (method: string, hasBody: boolean): boolean {
  return !hasBody && (method === 'GET' || method === 'HEAD')
}

/**
 * Whether a failed try is resent: `resendable` (isResendable), not resent before, `sent` to a
 * socket, no answer byte received (`answered` false), and the socket died.
 */
export function resendOnce (resendable: boolean, retried: boolean, sent: boolean, answered: boolean, err: Error): boolean {
  const code = (err as { code?: string }).code
  return resendable && !retried && sent && !answered && code !== undefined && DEAD_SOCKET_CODES.has(code)
}
