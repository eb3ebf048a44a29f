/**
 * A local OpenID Connect provider for admin-authentication tests: a JWKS served over HTTP on
 * 127.0.0.1:0 from a key pair made for the test, and a signer for tokens of any shape (right key,
 * a stranger's key under the same key id, any claims and times).
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload } from 'jose'
import type { Test } from 'tap'

export interface IdentityProvider {
  readonly jwksUrl: string
  readonly issuer: string
  /** How many times the JWKS was fetched. */
  readonly fetches: () => number
  /** A token signed with the provider's key; `claims` override the defaults (iss, aud, sub, exp in an hour). */
  sign (claims?: JWTPayload & { exp?: number }, options?: { stranger?: boolean, typ?: string }): Promise<string>
}

export const AUDIENCE = 'iceguard-admin-tests'

export async function startIdentityProvider (t: Test): Promise<IdentityProvider> {
  const kid = 'test-key-1'
  const own = await generateKeyPair('ES256', { extractable: true })
  const stranger = await generateKeyPair('ES256', { extractable: true })
  const jwk = { ...await exportJWK(own.publicKey), kid, alg: 'ES256', use: 'sig' }
  let fetches = 0
  const server = http.createServer((req, res) => {
    fetches++
    const body = JSON.stringify({ keys: [jwk] })
    res.writeHead(req.url === '/jwks.json' ? 200 : 404, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) })
    res.end(body)
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  t.teardown(async () => {
    server.closeAllConnections()
    await new Promise<void>(resolve => server.close(() => resolve()))
  })
  const issuer = `http://127.0.0.1:${port}/realms/test`
  return {
    jwksUrl: `http://127.0.0.1:${port}/jwks.json`,
    issuer,
    fetches: () => fetches,
    async sign (claims = {}, options = {}) {
      const now = Math.floor(Date.now() / 1000)
      const payload: JWTPayload = { iss: issuer, aud: AUDIENCE, sub: 'alice', iat: now, exp: now + 3600, ...claims }
      return await new SignJWT(payload)
        .setProtectedHeader({ alg: 'ES256', kid, typ: options.typ ?? 'JWT' })
        .sign(options.stranger === true ? stranger.privateKey : own.privateKey)
    }
  }
}
