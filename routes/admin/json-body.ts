/**
 * The admin API's JSON reader: the gate's own (lossless numbers, bounded depth, no duplicate or
 * prototype keys). Validation sees plain numbers; the evaluation gets the lossless tree, exactly
 * as the commit path does, so 64-bit snapshot ids in requirements compare digit for digit.
 */
import { ERRORS, GateError } from '../../src/errors.js'
import { parseCommitBody } from '../../src/json/parse-commit-body.js'
import { toPlainJson } from '../../src/schemas/plain-json.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The admin request body with every number kept as it was written. */
    losslessBody?: unknown
  }
}

/** An empty body is no body (a POST without one, e.g. policy reload); routes that need one say so. */
export function parseAdminJson (raw: Buffer): { lossless: unknown, plain: unknown } {
  if (raw.length === 0) return { lossless: undefined, plain: undefined }
  const parsed = parseCommitBody(raw)
  if (!parsed.ok) throw new GateError(ERRORS.MALFORMED_JSON, parsed.message)
  return { lossless: parsed.value, plain: toPlainJson(parsed.value) }
}
