import type { IncomingHttpHeaders } from 'node:http'
import { ERRORS, GateError } from '../errors.js'
import { readStringMap } from '../iceberg/json-values.js'
import type { ApplyIssue } from '../iceberg/metadata-builder.js'
import type { ParseIssue } from '../iceberg/types.js'
import { namespaceName, namespaceSegment, tableName } from '../iceberg/rest-path.js'
import type { KeyedLock } from './lock.js'
import { tableKey, type CatalogState, type CatalogStore, type NamespaceRecord, type TableRecord, type ViewRecord } from './store.js'

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
  /** A JSON value to write, or `chunks`: a body already written as JSON (UTF-8 chunks). */
  body?: unknown
  chunks?: readonly Buffer[]
  headers?: Record<string, string>
}

export const json = (body: unknown, headers?: Record<string, string>): Reply => ({ status: 200, body, headers })
export const noContent = (): Reply => ({ status: 204 })

/** A 400 BadRequestException. */
export const badRequest = (message: string): GateError => new GateError(ERRORS.BAD_REQUEST, message)

/** A request's string → string map (properties); anything else is a 400 naming `what`. */
export function stringMap (raw: unknown, what: string): Record<string, string> {
  const map = readStringMap(raw)
  if (map === undefined) throw badRequest(`Invalid ${what}: must be an object of strings`)
  return map
}

/**
 * The error for the first issue the model found: its Java exception decides the answer
 * (IllegalArgumentException or ValidationException 400, CommitFailedException 409, a request that
 * cannot be read BadRequestException 400), as the reference server maps the exception a builder
 * throws (test/interop/differential.test.ts compares them).
 */
function issueError (issue: ApplyIssue | ParseIssue): GateError {
  const exception = (issue as ApplyIssue).exception
  const def = exception === 'ValidationException'
    ? ERRORS.VALIDATION
    : exception === 'CommitFailedException' ? ERRORS.COMMIT_CONFLICT : exception === 'IllegalArgumentException' ? ERRORS.ILLEGAL_ARGUMENT : ERRORS.BAD_REQUEST
  return new GateError(def, issue.message)
}

/** Throws the error of the first issue, if there is one. */
export function failOnIssues (issues: ReadonlyArray<ApplyIssue | ParseIssue>): void {
  const first = issues[0]
  if (first !== undefined) throw issueError(first)
}

export function requireNamespace (state: CatalogState, ns: readonly string[]): NamespaceRecord {
  const record = state.namespaces.get(namespaceSegment(ns))
  if (record === undefined) throw new GateError(ERRORS.NO_SUCH_NAMESPACE, `Namespace does not exist: ${namespaceName(ns)}`)
  return record
}

export function requireTable (state: CatalogState, ns: readonly string[], name: string): TableRecord {
  const record = state.tables.get(tableKey(ns, name))
  if (record === undefined) throw new GateError(ERRORS.NO_SUCH_TABLE, `Table does not exist: ${tableName(ns, name)}`)
  return record
}

export function requireView (state: CatalogState, ns: readonly string[], name: string): ViewRecord {
  const record = state.views.get(tableKey(ns, name))
  if (record === undefined) throw new GateError(ERRORS.NO_SUCH_VIEW, `View does not exist: ${tableName(ns, name)}`)
  return record
}

/**
 * A table and a view may not share an identifier (spec createTable/createView 409: "The identifier
 * already exists as a table or view"). Messages are Java's (`InMemoryCatalog`, `BaseMetastoreViewCatalog`).
 */
export function assertNameFree (state: CatalogState, ns: readonly string[], name: string, creating: 'table' | 'view'): void {
  const key = tableKey(ns, name)
  if (state.tables.has(key)) {
    throw new GateError(ERRORS.ALREADY_EXISTS, creating === 'table' ? `Table already exists: ${tableName(ns, name)}` : `Table with same name already exists: ${tableName(ns, name)}`)
  }
  if (state.views.has(key)) {
    throw new GateError(ERRORS.ALREADY_EXISTS, creating === 'view' ? `View already exists: ${tableName(ns, name)}` : `View with same name already exists: ${tableName(ns, name)}`)
  }
}
