/**
 * The Iceberg REST path grammar's words: how a path segment and a namespace are decoded, and how
 * an identifier is named in messages.
 */

/** Namespace levels travel joined by the unit separator 0x1F (`%1F`); spec `parameters.namespace`. */
export const NAMESPACE_SEPARATOR = '\u001f'

/**
 * Decodes a path segment as the Java reference server does (`RESTUtil.decodeString` →
 * `URLDecoder`): form decoding, so `+` and `%20` both mean a space (the Java client sends a space
 * in a table name as `+`, iceberg-js as `%20`). Undefined for a malformed `%` escape.
 */
export function decodePathSegment (segment: string): string | undefined {
  const plus = segment.includes('+') ? segment.replaceAll('+', ' ') : segment
  if (!plus.includes('%')) return plus
  try {
    return decodeURIComponent(plus)
  } catch {
    return undefined
  }
}

/** The levels of a decoded namespace segment. */
export function namespaceLevels (decoded: string): string[] {
  return decoded.split(NAMESPACE_SEPARATOR)
}

/** Java `Namespace.toString()`: levels joined by dots. */
export const namespaceName = (ns: readonly string[]): string => ns.join('.')

/**
 * A table or view as the REST API names it: namespace levels and name, plus the raw `{prefix}`
 * path segment when the route has one. The one identity type of iceguard (gate, policy, catalog,
 * admin API); the JSON `TableIdentifier` of a request body reads into it.
 */
export interface TableRef {
  readonly prefix?: string
  readonly namespace: readonly string[]
  readonly name: string
}

/** Java `TableIdentifier.toString()`: `db.sub.table`, or the bare name when there is no namespace. */
export function tableName (table: Pick<TableRef, 'namespace' | 'name'>): string
export function tableName (ns: readonly string[], name: string): string
export function tableName (a: readonly string[] | Pick<TableRef, 'namespace' | 'name'>, name?: string): string {
  const ref = isLevels(a) ? { namespace: a, name: name ?? '' } : a
  return [...ref.namespace, ref.name].join('.')
}

function isLevels (a: readonly string[] | Pick<TableRef, 'namespace' | 'name'>): a is readonly string[] {
  return Array.isArray(a)
}
