/**
 * Verifies admin bearer JWTs issued by an OpenID Connect provider: signature by a key of the
 * provider's JWKS, `iss`, `aud`, `exp` (required: RFC 9068 §2.2 access tokens carry it, and a token
 * without one would be valid forever) and `nbf` (RFC 7519 §4.1); that it is an access token, not an
 * ID token (`accessTokenProblem`); then reads the grants from one claim.
 *
 * `jose` does the cryptography and caches the key set; it fetches the JWKS again when a token names
 * a key id it has not seen (key rotation), at most once per cooldown.
 */
import { createRemoteJWKSet, errors, jwtVerify, type JWTHeaderParameters, type JWTPayload } from 'jose'
import { isObject } from '../iceberg/json-values.js'
import type { AdminJwtConfig } from '../main/config.js'
import type { Grant } from './access.js'

/**
 * Asymmetric algorithms only: a JWKS publishes public keys, and accepting `HS*` or `none` would let
 * a token choose how it is checked (RFC 8725 §3.1).
 */
const JWT_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519']

/** Seconds of clock difference tolerated between the identity provider and iceguard on exp/nbf/iat. */
const CLOCK_TOLERANCE_SECONDS = 30

export type JwtCheck =
  | { readonly ok: true, readonly subject: string, readonly grants: ReadonlySet<Grant> }
  /** The token itself is bad: expired, wrong issuer or audience, bad signature, not a JWT. */
  | { readonly ok: false, readonly reason: 'invalid', readonly detail: string }
  /**
   * The key set could not be fetched: nothing is known about the token. `detail` is for the
   * caller and names no address; `logDetail` names the key set's URL and the cause, for the log.
   */
  | { readonly ok: false, readonly reason: 'unavailable', readonly detail: string, readonly logDetail: string }

export interface JwtVerifier {
  verify (token: string): Promise<JwtCheck>
}

export function createJwtVerifier (settings: AdminJwtConfig): JwtVerifier {
  const keys = createRemoteJWKSet(new URL(settings.jwksUrl), { timeoutDuration: 5_000 })
  return {
    async verify (token) {
      let payload: JWTPayload
      try {
        let header: JWTHeaderParameters
        ({ payload, protectedHeader: header } = await jwtVerify(token, keys, {
          issuer: settings.issuer,
          audience: settings.audience,
          algorithms: JWT_ALGORITHMS,
          clockTolerance: CLOCK_TOLERANCE_SECONDS,
          requiredClaims: ['exp']
        }))
        const problem = accessTokenProblem(header, payload)
        if (problem !== undefined) return { ok: false, reason: 'invalid', detail: problem }
      } catch (err) {
        return failure(err, settings.jwksUrl)
      }
      return { ok: true, subject: typeof payload.sub === 'string' ? payload.sub : '(no sub)', grants: grantsOf(payload, settings) }
    }
  }
}

/** Header `typ` values of an access token: RFC 9068 §2.1 `at+jwt`, and plain `JWT` as most providers write it. */
const ACCESS_TOKEN_TYPES: ReadonlySet<string> = new Set(['at+jwt', 'application/at+jwt', 'jwt', 'application/jwt'])

/**
 * Why a verified JWT is not an access token, or undefined. An ID token says who signed in to a
 * client; it is not a credential to call an API with (OpenID Connect Core §2, RFC 9068 §1), and a
 * client holding users' ID tokens must not become an iceguard admin with them. Refused: a header
 * `typ` other than an access token's, a `typ` claim other than `Bearer` (Keycloak marks its ID
 * tokens `ID`, its refresh tokens `Refresh`), and the claims only ID tokens carry (`at_hash`,
 * `c_hash`: OpenID Connect Core §3.1.3.6, §3.3.2.11).
 */
export function accessTokenProblem (header: Pick<JWTHeaderParameters, 'typ'>, payload: JWTPayload): string | undefined {
  if (header.typ !== undefined && !ACCESS_TOKEN_TYPES.has(header.typ.toLowerCase())) {
    return `the token's "typ" header ${JSON.stringify(header.typ)} is not an access token's (at+jwt or JWT)`
  }
  const typ = payload.typ
  if (typ !== undefined && (typeof typ !== 'string' || typ.toLowerCase() !== 'bearer')) {
    return `the token's "typ" claim ${JSON.stringify(typ)} is not an access token's (Bearer); an ID or refresh token is not an admin credential`
  }
  if (payload.at_hash !== undefined || payload.c_hash !== undefined) {
    return 'the token is an ID token (it carries at_hash or c_hash); an ID token is not an admin credential'
  }
  return undefined
}

function unavailable (jwksUrl: string, cause: string): JwtCheck {
  // The key set's address is the identity provider's internal business: it goes to the log only.
  return { ok: false, reason: 'unavailable', detail: 'the identity provider\'s key set could not be fetched', logDetail: `the key set at ${jwksUrl} could not be fetched (${cause})` }
}

function failure (err: unknown, jwksUrl: string): JwtCheck {
  // fetch's own failures (refused, DNS): the provider is unreachable.
  if (!(err instanceof errors.JOSEError)) return unavailable(jwksUrl, (err as Error).message)
  if (err instanceof errors.JWKSTimeout || err instanceof errors.JWKSInvalid || err.code === 'ERR_JOSE_GENERIC') return unavailable(jwksUrl, err.message)
  if (err instanceof errors.JWTExpired) return { ok: false, reason: 'invalid', detail: 'the token has expired' }
  if (err instanceof errors.JWTClaimValidationFailed) return { ok: false, reason: 'invalid', detail: `the token's "${err.claim}" claim is not accepted (${err.reason})` }
  if (err instanceof errors.JWSSignatureVerificationFailed) return { ok: false, reason: 'invalid', detail: 'the token\'s signature does not verify' }
  if (err instanceof errors.JWKSNoMatchingKey) return { ok: false, reason: 'invalid', detail: 'no key of the key set matches the token' }
  if (err instanceof errors.JOSEAlgNotAllowed) return { ok: false, reason: 'invalid', detail: 'the token\'s algorithm is not accepted' }
  return { ok: false, reason: 'invalid', detail: 'the token is not a valid JWT' }
}

/**
 * The grants the configured claim carries: a space-separated string (OAuth 2.0 `scope`, RFC 8693
 * §4.2) or an array of strings (`roles`, `groups`); a dotted name reaches into objects
 * (`realm_access.roles`, as Keycloak issues them).
 */
export function grantsOf (payload: JWTPayload, settings: Pick<AdminJwtConfig, 'claim' | 'readValue' | 'writeValue'>): ReadonlySet<Grant> {
  let value: unknown = payload
  for (const step of settings.claim.split('.')) {
    value = isObject(value) ? value[step] : undefined
  }
  const values = typeof value === 'string' ? value.split(/\s+/) : Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []
  const grants = new Set<Grant>()
  if (values.includes(settings.readValue)) grants.add('read')
  if (values.includes(settings.writeValue)) grants.add('write')
  return grants
}
