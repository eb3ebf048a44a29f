/**
 * Admin authentication: who is calling, and may they do what the endpoint asks. No Fastify here;
 * the admin routes and the console call `authorize` with the token they found and the access the
 * endpoint needs.
 *
 * Answers follow RFC 6750 §3.1: no token or a token that does not verify is 401 with
 * `WWW-Authenticate: Bearer`; a verified token without the needed grant is 403 (`insufficient_scope`).
 */
import { ERRORS, GateError } from '../errors.js'
import { allows, needsGrant, type AdminAccess, type AdminIdentity, type Grant } from './access.js'
import type { JwtVerifier } from './jwt-verifier.js'
import { isStaticToken } from './static-token.js'

const REALM = 'iceguard-admin'

interface AdminAuthOptions {
  /** `ICEGUARD_ADMIN_TOKEN`: grants read and write. */
  readonly staticToken?: string | undefined
  readonly jwt?: JwtVerifier | undefined
  /** Claim values named in 403 answers, so the caller knows what to ask for. */
  readonly grantNames?: Readonly<Record<Grant, string>>
  /** Seconds in `Retry-After` when the identity provider's key set cannot be fetched. */
  readonly retryAfter?: number
  /** Told why the key set could not be fetched (its URL and the cause), for the log; the answer names neither. */
  readonly onKeySetUnavailable?: (detail: string) => void
}

export interface AdminAuth {
  /** Whether any authentication is configured; if not, `read` and `commit` are open and `write` is refused. */
  readonly configured: boolean
  /** Checks a token without an endpoint in mind (the console's sign-in): undefined for no token. */
  identify (token: string | undefined, action: string): Promise<AdminIdentity>
  /**
   * The caller's identity when the endpoint may be called, undefined when no authentication is
   * configured and the endpoint is open; throws the 401/403/503 GateError to answer otherwise.
   */
  authorize (token: string | undefined, access: AdminAccess, action: string): Promise<AdminIdentity | undefined>
}

const ALL: ReadonlySet<Grant> = new Set(['read', 'write'])

export function createAdminAuth (options: AdminAuthOptions): AdminAuth {
  const staticToken = options.staticToken === '' ? undefined : options.staticToken
  const configured = staticToken !== undefined || options.jwt !== undefined
  const challenge = (extra = ''): Record<string, string> => ({ 'www-authenticate': `Bearer realm="${REALM}"${extra}` })

  const identify = async (token: string | undefined, action: string): Promise<AdminIdentity> => {
    if (token === undefined) {
      throw new GateError(ERRORS.NOT_AUTHORIZED, `Cannot ${action}: send an admin token as "Authorization: Bearer <token>" (or in X-Iceguard-Admin-Token)`, { headers: challenge() })
    }
    if (staticToken !== undefined && isStaticToken(staticToken, token)) {
      return { kind: 'static-token', principal: 'admin-token', grants: ALL }
    }
    if (options.jwt === undefined) {
      throw new GateError(ERRORS.NOT_AUTHORIZED, `Cannot ${action}: the admin token is not valid`, { headers: challenge(', error="invalid_token"') })
    }
    const checked = await options.jwt.verify(token)
    if (checked.ok) return { kind: 'jwt', principal: checked.subject, grants: checked.grants }
    if (checked.reason === 'unavailable') {
      options.onKeySetUnavailable?.(checked.logDetail)
      throw new GateError(ERRORS.UPSTREAM_UNAVAILABLE, `Cannot ${action}: the admin token cannot be checked now: ${checked.detail}`,
        { headers: { 'retry-after': String(options.retryAfter ?? 1) } })
    }
    throw new GateError(ERRORS.NOT_AUTHORIZED, `Cannot ${action}: the admin token is not valid: ${checked.detail}`, { headers: challenge(', error="invalid_token"') })
  }

  return {
    configured,
    identify,
    async authorize (token, access, action) {
      if (!configured) {
        if (access !== 'write') return undefined
        throw new GateError(ERRORS.FORBIDDEN, `Cannot ${action}: state-changing admin calls are disabled on this server (set ICEGUARD_ADMIN_TOKEN or ICEGUARD_ADMIN_JWKS_URL to enable them)`)
      }
      const identity = await identify(token, action)
      if (allows(identity, access)) return identity
      const need = needsGrant(access)
      const value = options.grantNames?.[need] ?? need
      throw new GateError(ERRORS.FORBIDDEN, `Cannot ${action}: the admin token does not grant ${need} access (it needs "${value}")`,
        { headers: challenge(`, error="insufficient_scope", scope="${value}"`) })
    }
  }
}
