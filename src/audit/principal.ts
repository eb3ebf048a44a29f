/**
 * Who made a request, in a form safe to log. The token itself never leaves this function:
 * a JWT gives its `sub` claim, HTTP Basic gives the user name, and any other credential a short
 * SHA-256 fingerprint that correlates requests without revealing the secret.
 *
 * iceguard verifies none of these (the upstream authorises the request), so the names it reads are
 * marked as claims, `unverified-sub:alice` and `unverified-user:bob`, in the decision log, the
 * console, webhooks and the audit line alike: anyone can write an unsigned JWT saying `sub: alice`.
 * Only a caller iceguard verified is recorded as `sub:<subject>` or `admin-token`
 * (`adminPrincipal` in src/auth/access.ts). A fingerprint claims nothing, and stays `token:<hex>`.
 */
import { createHash } from 'node:crypto'

const MAX_SUBJECT = 128

/** Most header values whose principal is remembered; a bound, not a cache size to tune. */
const MAX_REMEMBERED = 256
/** Longest header value remembered, so the memo's memory stays small (a few MB at worst). */
const MAX_REMEMBERED_TEXT = 8192

/**
 * Principal by `Authorization` value: a client sends the same header with every request, and
 * decoding or hashing it each time was a visible part of a commit's CPU. The keys are credentials,
 * so the map stays private to this module, is never iterated or printed, and is bounded (the
 * oldest entry leaves first). The values are the safe-to-log principals.
 */
const remembered = new Map<string, string>()

export function principalFromHeaders (headers: Readonly<Record<string, string | string[] | undefined>>): string | undefined {
  const raw = headers.authorization
  const value = Array.isArray(raw) ? raw[0] : raw
  if (value === undefined || value.trim() === '') return undefined
  let principal = remembered.get(value)
  if (principal === undefined) {
    principal = principalOf(value)
    if (value.length <= MAX_REMEMBERED_TEXT) {
      if (remembered.size >= MAX_REMEMBERED) remembered.delete(remembered.keys().next().value as string)
      remembered.set(value, principal)
    }
  }
  return principal
}

function principalOf (value: string): string {
  const space = value.indexOf(' ')
  const scheme = space === -1 ? '' : value.slice(0, space).toLowerCase()
  const credential = space === -1 ? value.trim() : value.slice(space + 1).trim()
  if (scheme === 'bearer') {
    const sub = jwtSubject(credential)
    if (sub !== undefined) return `unverified-sub:${sub}`
  } else if (scheme === 'basic') {
    const user = basicUser(credential)
    if (user !== undefined) return `unverified-user:${user}`
  }
  return `token:${fingerprint(credential)}`
}

/** First 12 hex digits of the SHA-256 of a credential. */
export function fingerprint (credential: string): string {
  return createHash('sha256').update(credential).digest('hex').slice(0, 12)
}

function jwtSubject (token: string): string | undefined {
  const parts = token.split('.')
  if (parts.length !== 3 || parts[1] === undefined) return undefined
  try {
    const payload = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8')) as unknown
    if (payload !== null && typeof payload === 'object' && 'sub' in payload) {
      const sub = (payload as { sub: unknown }).sub
      if (typeof sub === 'string' && sub !== '') return clean(sub)
    }
  } catch {}
  return undefined
}

function basicUser (credential: string): string | undefined {
  const decoded = Buffer.from(credential, 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  if (colon <= 0) return undefined
  return clean(decoded.slice(0, colon))
}

// A subject is caller-controlled text: keep it one printable line of bounded length.
function clean (s: string): string {
  // eslint-disable-next-line no-control-regex
  return s.replace(/[\u0000-\u001f\u007f]/g, '?').slice(0, MAX_SUBJECT)
}
