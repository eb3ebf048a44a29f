/**
 * The static admin token (`ICEGUARD_ADMIN_TOKEN`). Compared in constant time: both sides are hashed
 * first, so the comparison depends neither on where they differ nor on their lengths.
 */
import { createHash, timingSafeEqual } from 'node:crypto'

function digest (s: string): Buffer {
  return createHash('sha256').update(s, 'utf8').digest()
}

export function isStaticToken (configured: string, presented: string): boolean {
  return timingSafeEqual(digest(presented), digest(configured))
}

/**
 * Whether an `Authorization` value is `Bearer <the static token>`: checked on every request
 * forwarded to the catalog, so most values leave at a length comparison (the token's length is no
 * secret worth a hash per request); a value of the right length is compared in constant time.
 */
export function carriesStaticToken (configured: string, authorization: string): boolean {
  // `Bearer ` and the token, with a little room for extra spaces: anything else is not it.
  const slack = authorization.length - configured.length - 7
  if (slack < 0 || slack > 8) return false
  const match = /^\s*Bearer\s+(\S+)\s*$/i.exec(authorization)
  const token = match?.[1]
  if (token === undefined || token.length !== configured.length) return false
  return timingSafeEqual(Buffer.from(token), Buffer.from(configured))
}
