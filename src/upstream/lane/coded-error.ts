/**
 * An Error carrying the `code` undici would give the same failure, so the one catalogue
 * (src/errors.ts `upstreamError`) maps fast-lane failures exactly as it maps undici's.
 */
export function codedError (message: string, code: string): Error {
  return Object.assign(new Error(message), { code })
}
