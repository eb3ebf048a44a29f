import type { IncomingHttpHeaders } from 'node:http'
import { alreadyExists, noSuchNamespace, noSuchTable, noSuchView } from './errors.js'
import type { KeyedLock } from './lock.js'
import { nsKey, nsName, tableKey, tableName } from './paths.js'
import type { CatalogState, CatalogStore, NamespaceRecord, TableRecord, ViewRecord } from './store.js'

/** What every handler gets: the store, the table locks and the parsed request. */
export interface CatalogContext {
  readonly store: CatalogStore
  readonly locks: KeyedLock
}

export interface CatalogRequest {
  readonly method: string
  readonly namespace: string[]
  readonly table: string
  readonly query: URLSearchParams
  readonly headers: IncomingHttpHeaders
  /** The JSON body, parsed losslessly on first use; a syntax error is a 400. */
  body (): unknown
}

export interface Reply {
  status: number
  body?: unknown
  headers?: Record<string, string>
}

export const json = (body: unknown, headers?: Record<string, string>): Reply => ({ status: 200, body, headers })
export const noContent = (): Reply => ({ status: 204 })

export function requireNamespace (state: CatalogState, ns: readonly string[]): NamespaceRecord {
  const record = state.namespaces.get(nsKey(ns))
  if (record === undefined) throw noSuchNamespace(`Namespace does not exist: ${nsName(ns)}`)
  return record
}

export function requireTable (state: CatalogState, ns: readonly string[], name: string): TableRecord {
  const record = state.tables.get(tableKey(ns, name))
  if (record === undefined) throw noSuchTable(`Table does not exist: ${tableName(ns, name)}`)
  return record
}

export function requireView (state: CatalogState, ns: readonly string[], name: string): ViewRecord {
  const record = state.views.get(tableKey(ns, name))
  if (record === undefined) throw noSuchView(`View does not exist: ${tableName(ns, name)}`)
  return record
}

/**
 * A table and a view may not share an identifier (spec createTable/createView 409: "The identifier
 * already exists as a table or view"). Messages are Java's (`InMemoryCatalog`, `BaseMetastoreViewCatalog`).
 */
export function assertNameFree (state: CatalogState, ns: readonly string[], name: string, creating: 'table' | 'view'): void {
  const key = tableKey(ns, name)
  if (state.tables.has(key)) {
    throw alreadyExists(creating === 'table' ? `Table already exists: ${tableName(ns, name)}` : `Table with same name already exists: ${tableName(ns, name)}`)
  }
  if (state.views.has(key)) {
    throw alreadyExists(creating === 'view' ? `View already exists: ${tableName(ns, name)}` : `View with same name already exists: ${tableName(ns, name)}`)
  }
}
