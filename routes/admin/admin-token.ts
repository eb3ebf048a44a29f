/**
 * The admin token guarding state-changing admin calls (`ICEGUARD_ADMIN_TOKEN`), sent as
 * `Authorization: Bearer <token>`. Compared in constant time: both sides are hashed first so the
 * comparison never depends on where they differ or on their lengths.
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import { ERRORS, GateError } from '../../src/errors.js'

function digest (s: string): Buffer {
  return createHash('sha256').update(s, 'utf8').digest()
}

/** Throws 401 (no bearer token) or 403 (wrong token, or none configured). */
export function requireAdminToken (configured: string | undefined, authorization: string | string[] | undefined, action: string): void {
  if (configured === undefined || configured === '') {
    throw new GateError(ERRORS.FORBIDDEN, `Cannot ${action}: state-changing admin calls are disabled on this server (set ICEGUARD_ADMIN_TOKEN to enable them)`)
  }
  const header = Array.isArray(authorization) ? authorization[0] : authorization
  const match = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header)
  if (match === null) {
    throw new GateError(ERRORS.NOT_AUTHORIZED, `Cannot ${action}: send the admin token as "Authorization: Bearer <token>"`,
      { headers: { 'www-authenticate': 'Bearer realm="iceguard-admin"' } })
  }
  if (!timingSafeEqual(digest(match[1] as string), digest(configured))) {
    throw new GateError(ERRORS.FORBIDDEN, `Cannot ${action}: the admin token is not valid`)
  }
}
