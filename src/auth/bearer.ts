/**
 * Where an admin credential travels. `Authorization: Bearer <token>` (RFC 6750 §2.1) is the usual
 * place; `X-Iceguard-Admin-Token: <token>` carries it beside a catalog credential, for callers whose
 * `Authorization` is the upstream catalog's (admin table reads and commits are made as the caller).
 */
import type { IncomingHttpHeaders } from 'node:http'

export const ADMIN_TOKEN_HEADER = 'x-iceguard-admin-token'

interface AdminCredential {
  readonly token: string | undefined
  readonly from: 'authorization' | 'admin-header'
}

/** The token of an `Authorization: Bearer <token>` header, or undefined. */
function bearerToken (authorization: string | string[] | undefined): string | undefined {
  const header = Array.isArray(authorization) ? authorization[0] : authorization
  const match = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header)
  return match === null ? undefined : match[1]
}

/** The admin header wins when present: then `Authorization` is the catalog's and is left alone. */
export function adminCredential (headers: IncomingHttpHeaders): AdminCredential {
  const own = headers[ADMIN_TOKEN_HEADER]
  const value = (Array.isArray(own) ? own[0] : own)?.trim()
  if (value !== undefined) return { token: bearerToken(value) ?? (value === '' ? undefined : value), from: 'admin-header' }
  return { token: bearerToken(headers.authorization), from: 'authorization' }
}
