/**
 * Who is looking at a console page. The credential comes from the request as the admin API takes
 * it (`Authorization: Bearer`, `X-Iceguard-Admin-Token`; for tools and for a sign-in proxy in front
 * of iceguard) or from the console's own cookie, which the sign-in form sets (for people). The
 * cookie holds a session id; the credential it stands for stays on the server
 * (src/auth/console-sessions.ts).
 */
import type { FastifyRequest } from 'fastify'
import { parse as parseCookies, serialize as serializeCookie } from 'cookie'
import type { AdminIdentity } from '../../src/auth/access.js'
import { adminCredential, carriesToken } from '../../src/auth/bearer.js'
import { CONSOLE_COOKIE } from '../../src/auth/credential-names.js'
import type { ConsoleSessions } from '../../src/auth/console-sessions.js'

/** Eight hours: a working day. A JWT that expires sooner is refused when it does, and the page asks again. */
export const SESSION_SECONDS = 8 * 3600

export interface ConsoleCredential {
  readonly token: string | undefined
  readonly from: 'authorization' | 'admin-header' | 'cookie'
}

/** The session id in the request's console cookie, if any. */
export function sessionId (request: FastifyRequest): string | undefined {
  const cookie = request.headers.cookie === undefined ? undefined : parseCookies(request.headers.cookie)[CONSOLE_COOKIE]
  return cookie === undefined || cookie === '' ? undefined : cookie
}

export function consoleCredential (request: FastifyRequest, sessions: ConsoleSessions): ConsoleCredential {
  const fromHeaders = adminCredential(request.headers)
  if (fromHeaders.token !== undefined) return fromHeaders
  const id = sessionId(request)
  return { token: id === undefined ? undefined : sessions.credential(id, Date.now()), from: 'cookie' }
}

/**
 * HttpOnly (no script reads it), SameSite=Lax (sent when following a link from a notification,
 * never with another site's form posts), Path=/console (never sent to the Iceberg or admin routes),
 * Secure when iceguard is reached over HTTPS.
 */
export function signInCookie (session: string, secure: boolean): string {
  return serializeCookie(CONSOLE_COOKIE, session, { httpOnly: true, sameSite: 'lax', path: '/console', secure, maxAge: SESSION_SECONDS })
}

export function signOutCookie (secure: boolean): string {
  return serializeCookie(CONSOLE_COOKIE, '', { httpOnly: true, sameSite: 'lax', path: '/console', secure, maxAge: 0 })
}

/**
 * The `Authorization` the console's table reads carry to the catalog: the catalog credential the
 * viewer meant for it, never the admin credential. With admin authentication configured that is
 * `Authorization` beside an admin token in `X-Iceguard-Admin-Token` (not the same token again);
 * a viewer signed in with the cookie or by `Authorization` sends none. With nothing configured,
 * whatever the browser sent, as the admin API does.
 */
export function catalogAuthorization (request: FastifyRequest, credential: ConsoleCredential, identity: AdminIdentity | undefined): string | undefined {
  const a = request.headers.authorization
  const sent = Array.isArray(a) ? a[0] : a
  if (identity === undefined) return sent
  if (credential.from !== 'admin-header' || carriesToken(sent, credential.token)) return undefined
  return sent
}
