/**
 * Where an admin credential travels. `Authorization: Bearer <token>` (RFC 6750 §2.1) is the usual
 * place; `X-Iceguard-Admin-Token: <token>` carries it beside a catalog credential, for callers whose
 * `Authorization` is the upstream catalog's (admin table reads and commits are made as the caller).
 */
import type { IncomingHttpHeaders } from 'node:http'
import { ADMIN_TOKEN_HEADER } from './credential-names.js'

export { ADMIN_TOKEN_HEADER }

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

/** Whether an `Authorization` header carries this token (as a bearer token or bare). */
export function carriesToken (authorization: string | string[] | undefined, token: string | undefined): boolean {
  if (token === undefined || authorization === undefined) return false
  const header = Array.isArray(authorization) ? authorization : [authorization]
  return header.some(h => bearerToken(h) === token || h.trim() === token)
}
