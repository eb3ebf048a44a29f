/**
 * Who is looking at a console page. The credential comes from the request as the admin API takes
 * it (`Authorization: Bearer`, `X-Iceguard-Admin-Token`; for tools and for a sign-in proxy in front
 * of iceguard) or from the console's own cookie, which the sign-in form sets (for people).
 */
import type { FastifyRequest } from 'fastify'
import { parse as parseCookies, serialize as serializeCookie } from 'cookie'
import type { AdminIdentity } from '../../src/auth/access.js'
import { adminCredential } from '../../src/auth/bearer.js'

const COOKIE = 'iceguard_console'

/** Eight hours: a working day. A JWT that expires sooner is refused when it does, and the page asks again. */
const COOKIE_MAX_AGE_SECONDS = 8 * 3600

interface ConsoleCredential {
  readonly token: string | undefined
  readonly from: 'authorization' | 'admin-header' | 'cookie'
}

export function consoleCredential (request: FastifyRequest): ConsoleCredential {
  const fromHeaders = adminCredential(request.headers)
  if (fromHeaders.token !== undefined) return fromHeaders
  const cookie = request.headers.cookie === undefined ? undefined : parseCookies(request.headers.cookie)[COOKIE]
  return { token: cookie === undefined || cookie === '' ? undefined : cookie, from: 'cookie' }
}

/**
 * HttpOnly (no script reads it), SameSite=Lax (sent when following a link from a notification,
 * never with another site's form posts), Path=/console (never sent to the Iceberg or admin routes),
 * Secure when iceguard is reached over HTTPS.
 */
export function signInCookie (token: string, secure: boolean): string {
  return serializeCookie(COOKIE, token, { httpOnly: true, sameSite: 'lax', path: '/console', secure, maxAge: COOKIE_MAX_AGE_SECONDS })
}

export function signOutCookie (secure: boolean): string {
  return serializeCookie(COOKIE, '', { httpOnly: true, sameSite: 'lax', path: '/console', secure, maxAge: 0 })
}

/**
 * The `Authorization` the console's upstream reads may carry: a verified JWT (the catalog sees the
 * same user), never the static token; with no admin authentication configured, whatever the
 * browser sent, as the admin API does.
 */
export function upstreamAuthorization (request: FastifyRequest, identity: AdminIdentity | undefined): string | undefined {
  if (identity !== undefined) return identity.upstreamAuthorization
  const a = request.headers.authorization
  return Array.isArray(a) ? a[0] : a
}
