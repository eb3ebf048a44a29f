/**
 * Request targets the proxy refuses to forward because an upstream could resolve them outside the
 * path the client named: dot segments (`..`, `.`), also percent-encoded (`%2e%2e`, RFC 3986 §6.2.2.2
 * says `%2E` is a dot), double-encoded (`%252e`), hidden behind `;` path parameters (`..;x`, which
 * servlet containers strip before resolving) or joined by an encoded slash or a backslash
 * (`a%2F..%2Fb`, `..\b`). Forwarded as they came, such paths could escape the upstream's base path
 * (`/api/catalog/v1/../../admin`). No Iceberg client writes them: Java and iceberg-js encode every
 * identifier, so a name is never a bare dot segment.
 */

/** Why `rawUrl` (origin-form path and query) must not be forwarded, or undefined when it is fine. */
export function unsafePathReason (rawUrl: string): string | undefined {
  const q = rawUrl.indexOf('?')
  const path = q === -1 ? rawUrl : rawUrl.slice(0, q)
  if (!path.startsWith('/')) return 'the request target is not an absolute path'
  for (const segment of path.split('/')) {
    // Cheap exit for the common case: no dot, no escape, no backslash, no parameter.
    if (!/[.%\\;]/.test(segment)) continue
    if (hasDotPiece(segment)) return `the path segment "${printable(segment)}" is a dot segment (or encodes one)`
  }
  return undefined
}

function hasDotPiece (segment: string): boolean {
  let text = segment
  // Three rounds cover double encoding (%252e → %2e → .) with one to spare.
  for (let round = 0; round < 3; round++) {
    for (const piece of text.split(/[/\\]/)) {
      const semi = piece.indexOf(';')
      const bare = semi === -1 ? piece : piece.slice(0, semi)
      if (bare === '.' || bare === '..') return true
    }
    if (!text.includes('%')) return false
    const decoded = decodeOnce(text)
    if (decoded === text) return false
    text = decoded
  }
  return false
}

/** Percent-decodes valid escapes and leaves invalid ones as they are (never throws). */
function decodeOnce (text: string): string {
  return text.replace(/%([0-9a-fA-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)))
}

function printable (s: string): string {
  // eslint-disable-next-line no-control-regex
  const flat = s.replace(/[\u0000-\u001f\u007f]/g, '?')
  return flat.length > 80 ? `${flat.slice(0, 80)}…` : flat
}
