import { badRequest } from './errors.js'

/**
 * Path decoding as the Java reference server does it (`RESTUtil.decodeString` → `URLDecoder`):
 * form decoding, so `+` and `%20` both mean a space. The Java client sends a space in a table
 * name as `+`, iceberg-js as `%20`; both must name the same table.
 */
export function decodeSegment (raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '))
  } catch {
    throw badRequest(`Malformed path segment: ${raw}`)
  }
}

/** Namespace levels travel joined by the unit separator 0x1F (`%1F`); spec `parameters.namespace`. */
export const NAMESPACE_SEPARATOR = '\u001f'

export function decodeNamespace (raw: string): string[] {
  return decodeSegment(raw).split(NAMESPACE_SEPARATOR)
}

/**
 * Names become folder names in the warehouse, so a name must never be able to leave its folder:
 * no separators, no `..`, no NUL or other control characters, and no leading dot (dot names are
 * the warehouse's own files, such as the catalog state file).
 */
export function checkName (kind: string, name: unknown): string {
  if (typeof name !== 'string' || name.length === 0) throw badRequest(`Invalid ${kind} name: must be a non-empty string`)
  // eslint-disable-next-line no-control-regex
  if (/[/\\\u0000-\u001f\u007f]/.test(name) || name.includes('..') || name.startsWith('.')) {
    throw badRequest(`Invalid ${kind} name: ${JSON.stringify(name)}: must not contain '/', '\\', '..', control characters, or start with '.'`)
  }
  if (Buffer.byteLength(name) > 255) throw badRequest(`Invalid ${kind} name: longer than 255 bytes`)
  return name
}

export function checkNamespace (levels: unknown): string[] {
  if (!Array.isArray(levels) || levels.length === 0) throw badRequest('Invalid namespace: must be a non-empty array of strings')
  return levels.map(level => checkName('namespace', level))
}

/** Java `Namespace.toString()` / `TableIdentifier.toString()`: levels joined by dots. */
export const nsName = (ns: readonly string[]): string => ns.join('.')
export const tableName = (ns: readonly string[], name: string): string => `${nsName(ns)}.${name}`

export const nsKey = (ns: readonly string[]): string => ns.join(NAMESPACE_SEPARATOR)
// NUL cannot occur in a checked name, so it separates namespace and name unambiguously.
export const tableKey = (ns: readonly string[], name: string): string => `${nsKey(ns)}\u0000${name}`
