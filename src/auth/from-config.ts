/** Admin authentication as the configuration asks for it: the static token, JWTs, both or neither. */
import type { Config } from '../main/config.js'
import { createAdminAuth, type AdminAuth } from './admin-auth.js'
import { createJwtVerifier } from './jwt-verifier.js'

export function adminAuthFromConfig (config: Pick<Config, 'adminToken' | 'adminJwt' | 'retryAfter'>, onKeySetUnavailable?: (detail: string) => void): AdminAuth {
  const jwt = config.adminJwt
  return createAdminAuth({
    staticToken: config.adminToken,
    jwt: jwt === undefined ? undefined : createJwtVerifier(jwt),
    grantNames: jwt === undefined ? undefined : { read: jwt.readValue, write: jwt.writeValue },
    retryAfter: config.retryAfter,
    ...(onKeySetUnavailable !== undefined && { onKeySetUnavailable })
  })
}
