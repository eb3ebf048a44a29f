/**
 * Where iceguard's own credentials travel, named once: the admin token's own header and the
 * console's session cookie. Neither is ever sent to the upstream catalog, on any route
 * (src/upstream/headers.ts drops them from every forwarded request).
 */

/** `X-Iceguard-Admin-Token: <token>`: the admin credential beside a catalog credential in `Authorization`. */
export const ADMIN_TOKEN_HEADER = 'x-iceguard-admin-token'

/** The console's session cookie (Path=/console; a browser sends it nowhere else, a script might). */
export const CONSOLE_COOKIE = 'iceguard_console'

/**
 * A `Cookie` header without the console's cookie: undefined when nothing else is left. The header
 * is split at `;` (RFC 6265 §4.2.1); the other cookies keep their bytes.
 */
export function withoutConsoleCookie (value: string): string | undefined {
  if (!value.includes(CONSOLE_COOKIE)) return value
  const kept = value.split(';').filter(pair => pair.trim().split('=', 1)[0]?.trim() !== CONSOLE_COOKIE)
  const joined = kept.map(p => p.trim()).join('; ')
  return joined === '' ? undefined : joined
}
