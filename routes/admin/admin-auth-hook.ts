/**
 * Every admin endpoint passes here before its handler: the access it needs comes from the route's
 * `config.adminAccess`, else from its method (GET and HEAD read; anything else is a `write`, so an
 * endpoint nobody classified is closed by default).
 *
 * The admin credential never reaches the upstream catalog, whatever its kind: table reads and
 * commits made as the caller carry only the catalog credential the caller meant for the catalog.
 * That is `Authorization` when the admin credential came in `X-Iceguard-Admin-Token` (and is not the
 * same token again), and nothing when `Authorization` itself carried the admin credential
 * (docs/security.md, "What reaches the catalog"). Without admin authentication configured there is
 * no admin credential, and `Authorization` is the caller's as it came.
 */
import type { FastifyRequest } from 'fastify'
import type { AdminAccess, AdminIdentity } from '../../src/auth/access.js'
import type { AdminAuth } from '../../src/auth/admin-auth.js'
import { ADMIN_TOKEN_HEADER, adminCredential, carriesToken } from '../../src/auth/bearer.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** What the endpoint needs of an admin caller; a function for endpoints whose query decides (dry run or commit). */
    adminAccess?: AdminAccess | ((request: FastifyRequest) => AdminAccess)
  }
  interface FastifyRequest {
    /** The verified admin caller; undefined while no admin authentication is configured. */
    adminIdentity?: AdminIdentity
  }
}

const AUTHORIZATION: ReadonlySet<string> = new Set(['authorization'])

function accessOf (request: FastifyRequest): AdminAccess {
  const declared = request.routeOptions.config.adminAccess
  if (typeof declared === 'function') return declared(request)
  if (declared !== undefined) return declared
  return request.method === 'GET' || request.method === 'HEAD' ? 'read' : 'write'
}

export function adminAuthHook (auth: AdminAuth) {
  return async function authenticateAdmin (request: FastifyRequest): Promise<void> {
    const credential = adminCredential(request.headers)
    const identity = await auth.authorize(credential.token, accessOf(request), `call ${request.method} ${request.routeOptions.url ?? request.url.split('?')[0]}`)
    delete request.headers[ADMIN_TOKEN_HEADER]
    if (identity === undefined) return
    request.adminIdentity = identity
    if (credential.from === 'authorization' || carriesToken(request.headers.authorization, credential.token)) {
      delete request.headers.authorization
      request.withheldHeaders = AUTHORIZATION
    }
  }
}
