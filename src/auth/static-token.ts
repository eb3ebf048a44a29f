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
