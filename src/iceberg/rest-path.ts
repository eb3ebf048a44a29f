/**
 * The Iceberg REST path grammar's words: how a path segment and a namespace are decoded, how a
 * body's table identifier is read, and how an identifier is named in messages.
 */
import { isObject } from './json-values.js'

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

/** The decoded namespace segment of these levels (the inverse of `namespaceLevels`); also a map key. */
export function namespaceSegment (levels: readonly string[]): string {
  return levels.join(NAMESPACE_SEPARATOR)
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

/**
 * A `TableIdentifier` in a request body (spec `components.schemas.TableIdentifier`): both members
 * are required, so a null in either is named. The gate and the dry run read it alike.
 */
export function readTableIdentifier (v: unknown): { namespace: string[], name: string } | { problem: string } {
  if (!isObject(v)) return { problem: v === undefined ? 'is missing' : v === null ? 'is null' : 'must be an object' }
  const ns = v.namespace
  const name = v.name
  if (!Array.isArray(ns) || !ns.every(p => typeof p === 'string')) {
    return { problem: `namespace ${ns === null ? 'is null (required)' : ns === undefined ? 'is missing' : 'must be an array of strings'}` }
  }
  if (typeof name !== 'string' || name === '') return { problem: `name ${name === null ? 'is null (required)' : 'must be a non-empty string'}` }
  return { namespace: ns as string[], name }
}

/** The same table, by levels: `a` + `b.t` and `a.b` + `t` print alike but are other tables. */
export function sameTable (a: Pick<TableRef, 'namespace' | 'name'>, b: Pick<TableRef, 'namespace' | 'name'>): boolean {
  return a.name === b.name && a.namespace.length === b.namespace.length && a.namespace.every((level, i) => level === b.namespace[i])
}

/**
 * The table a dotted name such as an override token's `db.sub.orders` means: every dot separates
 * levels, the last part is the name. A namespace level or a name that contains a dot therefore
 * cannot be written this way; undefined when a part is empty or there is no namespace.
 */
export function tableFromDotted (dotted: string): { namespace: string[], name: string } | undefined {
  const parts = dotted.split('.')
  const name = parts.pop()
  if (name === undefined || parts.length === 0 || name === '' || parts.some(p => p === '')) return undefined
  return { namespace: parts, name }
}

/** A table by its levels, for messages where dotted names could read alike: `namespace "a" / "b", table "c"`. */
export function tableLevels (table: Pick<TableRef, 'namespace' | 'name'>): string {
  return `namespace ${table.namespace.map(l => JSON.stringify(l)).join(' / ')}, table ${JSON.stringify(table.name)}`
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
