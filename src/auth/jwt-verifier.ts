/**
 * Verifies admin bearer JWTs issued by an OpenID Connect provider: signature by a key of the
 * provider's JWKS, `iss`, `aud`, `exp`/`nbf` (RFC 7519 §4.1), then reads the grants from one claim.
 *
 * `jose` does the cryptography and caches the key set; it fetches the JWKS again when a token names
 * a key id it has not seen (key rotation), at most once per cooldown.
 */
import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload } from 'jose'
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
  /** The key set could not be fetched: nothing is known about the token. */
  | { readonly ok: false, readonly reason: 'unavailable', readonly detail: string }

export interface JwtVerifier {
  verify (token: string): Promise<JwtCheck>
}

export function createJwtVerifier (settings: AdminJwtConfig): JwtVerifier {
  const keys = createRemoteJWKSet(new URL(settings.jwksUrl), { timeoutDuration: 5_000 })
  return {
    async verify (token) {
      let payload: JWTPayload
      try {
        ({ payload } = await jwtVerify(token, keys, {
          issuer: settings.issuer,
          audience: settings.audience,
          algorithms: JWT_ALGORITHMS,
          clockTolerance: CLOCK_TOLERANCE_SECONDS
        }))
      } catch (err) {
        return failure(err, settings.jwksUrl)
      }
      return { ok: true, subject: typeof payload.sub === 'string' ? payload.sub : '(no sub)', grants: grantsOf(payload, settings) }
    }
  }
}

function failure (err: unknown, jwksUrl: string): JwtCheck {
  if (!(err instanceof errors.JOSEError)) {
    // fetch's own failures (refused, DNS): the provider is unreachable.
    return { ok: false, reason: 'unavailable', detail: `the key set at ${jwksUrl} could not be fetched (${(err as Error).message})` }
  }
  if (err instanceof errors.JWKSTimeout || err instanceof errors.JWKSInvalid || err.code === 'ERR_JOSE_GENERIC') {
    return { ok: false, reason: 'unavailable', detail: `the key set at ${jwksUrl} could not be fetched (${err.message})` }
  }
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
