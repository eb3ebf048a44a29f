/**
 * The process-wide error handler, the last resort behind every `error` listener and `catch`:
 * an error that reaches it is logged with where it came from (the background loop running it,
 * `activity.ts`), and ends the process only when it leaves the process unsound.
 *
 * - An I/O failure (a socket, a database or HTTP connection, a file watcher: the error carries a
 *   system call, an errno code, an undici code or a PostgreSQL SQLSTATE) lost one resource. Its
 *   owner sees the failure on its own call and retries; the rest of the process is as it was.
 * - Any error from a named background loop (the decision log, webhook delivery, revocation
 *   refresh, retention, the policy watch) degrades that feature only: the loop runs again on its
 *   next tick, and the commit path never waits on it.
 * - A programming error (TypeError, ReferenceError, RangeError, SyntaxError, a failed assertion)
 *   anywhere, and any other error from outside a named loop (the request path), stopped our own
 *   code halfway through a change of state: the process closes as on SIGTERM and exits 1, for its
 *   supervisor to start a sound one.
 */
import { currentActivity } from '../activity.js'

export type ErrorOrigin = 'uncaughtException' | 'unhandledRejection'

const PROGRAMMING_ERRORS = new Set(['TypeError', 'ReferenceError', 'RangeError', 'SyntaxError', 'EvalError', 'URIError', 'AssertionError'])

/** Why `err` leaves the process unsound, or undefined when it does not. */
export function unsoundBecause (err: unknown, during: string | undefined): string | undefined {
  const e = (typeof err === 'object' && err !== null ? err : {}) as { name?: unknown, code?: unknown, syscall?: unknown, errno?: unknown, severity?: unknown }
  const code = typeof e.code === 'string' ? e.code : undefined
  if ((typeof e.name === 'string' && PROGRAMMING_ERRORS.has(e.name)) || code === 'ERR_ASSERTION' || code === 'ERR_INTERNAL_ASSERTION') {
    return 'a programming error: the code that threw stopped halfway'
  }
  if (ioFailure(e, code)) return undefined
  if (during !== undefined) return undefined
  return 'an error outside any background loop, of no known I/O kind'
}

function ioFailure (e: { syscall?: unknown, errno?: unknown, severity?: unknown }, code: string | undefined): boolean {
  if (typeof e.syscall === 'string' || typeof e.errno === 'number') return true
  if (code === undefined) return false
  // libuv codes (ECONNRESET, EPIPE, ETIMEDOUT …), undici's, and PostgreSQL's SQLSTATE (five characters, with a severity).
  return /^E[A-Z0-9]+$/.test(code) || code.startsWith('UND_ERR_') || (typeof e.severity === 'string' && /^[0-9A-Z]{5}$/.test(code))
}

interface ProcessErrorLogger {
  error (obj: object, msg: string): void
}

/**
 * Listens for `uncaughtException` and `unhandledRejection`. `shutDown` is called once, for the
 * first unsound error; it closes the process.
 */
export function handleProcessErrors (log: ProcessErrorLogger, shutDown: (err: unknown) => void): () => void {
  let shuttingDown = false
  const onError = (origin: ErrorOrigin) => (err: unknown): void => {
    const during = currentActivity()
    const unsound = unsoundBecause(err, during)
    try {
      log.error({ err, origin, during: during ?? 'not a background loop (the request path or start-up)', ...(unsound !== undefined ? { unsound } : {}) },
        unsound !== undefined ? `shutting down after an error: ${unsound}` : `an error nothing handled: ${during ?? 'the process'} goes on`)
    } catch {}
    if (unsound !== undefined && !shuttingDown) {
      shuttingDown = true
      shutDown(err)
    }
  }
  const onException = onError('uncaughtException')
  const onRejection = onError('unhandledRejection')
  process.on('uncaughtException', onException)
  process.on('unhandledRejection', onRejection)
  return () => {
    process.removeListener('uncaughtException', onException)
    process.removeListener('unhandledRejection', onRejection)
  }
}
