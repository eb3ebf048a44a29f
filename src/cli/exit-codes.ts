/**
 * Exit codes of the `iceguard` CLI, stable so CI pipelines can branch on them
 * (documented in docs/cli.md).
 */
import { ERRORS, GateError } from '../errors.js'

export const EXIT = Object.freeze({
  /** allow or warn: the change may go ahead; the policy file is valid. */
  OK: 0,
  /** deny: at least one error finding; `policy validate`: the policy is invalid. */
  DENY: 1,
  /** conflict: the request's requirements do not hold against the given metadata (a 409 at the gate). */
  CONFLICT: 2,
  /** usage or input error: unknown command or flag, unreadable file, invalid JSON, missing secret. */
  USAGE: 3,
  /** A fault inside iceguard (a bug): the message names it. */
  INTERNAL: 4
})

export type ExitCode = typeof EXIT[keyof typeof EXIT]

/** Exit code for a gate verdict. */
export function exitForVerdict (verdict: string): ExitCode {
  if (verdict === 'deny') return EXIT.DENY
  if (verdict === 'conflict') return EXIT.CONFLICT
  return EXIT.OK
}

/**
 * A usage or input problem: printed as `iceguard: <message>` and exits with EXIT.USAGE. It is
 * the catalogue's `GATE_ERR_USAGE` (src/errors.ts): one error shape for the server and the CLI.
 */
export class UsageError extends GateError {
  constructor (message: string) {
    super(ERRORS.USAGE, message)
    this.name = 'UsageError'
  }
}
