import { ERRORS, GateError } from '../errors.js'
import { commitTable, commitTransaction } from './commits.js'
import type { CatalogContext, CatalogRequest, Reply } from './context.js'
import { createNamespace, dropNamespace, listNamespaces, loadNamespace, namespaceExists, updateNamespaceProperties } from './namespaces.js'
import { createTable, dropTable, listTables, loadCredentials, loadTable, registerTable, renameTable, reportMetrics, tableExists } from './tables.js'
import { commitView, createView, dropView, listViews, loadView, registerView, renameView, viewExists } from './views.js'

/**
 * The route table: paths after `/v1/{prefix}` (the prefix is optional), `:ns` and `:table`
 * segments, and a handler per method. `endpoint` is the spec's spelling for `/v1/config`.
 */
type Handler = (ctx: CatalogContext, req: CatalogRequest) => Reply | Promise<Reply>

interface Route {
  readonly path: readonly string[]
  readonly methods: Readonly<Record<string, Handler>>
  /** Advertised in `/v1/config` endpoints. */
  readonly advertise: boolean
}

const notSupported = (what: string): Handler => () => { throw new GateError(ERRORS.UNSUPPORTED_OPERATION, `${what} is not supported by the embedded catalog`) }

const ROUTES: readonly Route[] = [
  { path: ['namespaces'], methods: { GET: listNamespaces, POST: createNamespace }, advertise: true },
  { path: ['namespaces', ':ns'], methods: { GET: loadNamespace, HEAD: namespaceExists, DELETE: dropNamespace }, advertise: true },
  { path: ['namespaces', ':ns', 'properties'], methods: { POST: updateNamespaceProperties }, advertise: true },
  { path: ['namespaces', ':ns', 'tables'], methods: { GET: listTables, POST: createTable }, advertise: true },
  { path: ['namespaces', ':ns', 'register'], methods: { POST: registerTable }, advertise: true },
  { path: ['namespaces', ':ns', 'tables', ':table'], methods: { GET: loadTable, HEAD: tableExists, POST: commitTable, DELETE: dropTable }, advertise: true },
  { path: ['namespaces', ':ns', 'tables', ':table', 'metrics'], methods: { POST: reportMetrics }, advertise: true },
  { path: ['namespaces', ':ns', 'tables', ':table', 'credentials'], methods: { GET: loadCredentials }, advertise: true },
  { path: ['namespaces', ':ns', 'tables', ':table', 'unregister'], methods: { POST: (ctx, req) => dropTable(ctx, req, false) }, advertise: false },
  { path: ['tables', 'rename'], methods: { POST: renameTable }, advertise: true },
  { path: ['transactions', 'commit'], methods: { POST: commitTransaction }, advertise: true },
  // Views (spec listViews … registerView): advertised, so Java clients call them (they skip view
  // endpoints a server's `endpoints` list leaves out).
  { path: ['namespaces', ':ns', 'views'], methods: { GET: listViews, POST: createView }, advertise: true },
  { path: ['namespaces', ':ns', 'views', ':table'], methods: { GET: loadView, HEAD: viewExists, POST: commitView, DELETE: dropView }, advertise: true },
  { path: ['views', 'rename'], methods: { POST: renameView }, advertise: true },
  { path: ['namespaces', ':ns', 'register-view'], methods: { POST: registerView }, advertise: true },
  // Server-side scan planning and remote signing: not offered (and not advertised, so clients do not ask).
  { path: ['namespaces', ':ns', 'tables', ':table', 'plan'], methods: { POST: notSupported('Scan planning') }, advertise: false },
  { path: ['namespaces', ':ns', 'tables', ':table', 'plan', ':plan'], methods: { GET: notSupported('Scan planning'), DELETE: notSupported('Scan planning') }, advertise: false },
  { path: ['namespaces', ':ns', 'tables', ':table', 'tasks'], methods: { POST: notSupported('Scan planning') }, advertise: false },
  { path: ['namespaces', ':ns', 'tables', ':table', 'sign'], methods: { POST: notSupported('Remote signing') }, advertise: false }
]

/** `endpoints` for `/v1/config`: "<VERB> <path from the spec>" for every advertised route. */
export function advertisedEndpoints (): string[] {
  const out: string[] = []
  for (const route of ROUTES) {
    if (!route.advertise) continue
    // The spec names the last segment {view} on view routes, {table} elsewhere.
    const last = route.path.includes('views') ? '{view}' : '{table}'
    const path = '/v1/{prefix}/' + route.path.map(p => p === ':ns' ? '{namespace}' : p === ':table' ? last : p).join('/')
    for (const method of Object.keys(route.methods)) out.push(`${method} ${path}`)
  }
  return out
}

/** Finds the route for path segments (already split, still encoded); params are the raw segments. */
export function matchRoute (segments: readonly string[]): { route: Route, params: Record<string, string> } | undefined {
  for (const route of ROUTES) {
    if (route.path.length !== segments.length) continue
    const params: Record<string, string> = {}
    let ok = true
    for (let i = 0; i < route.path.length && ok; i++) {
      const want = route.path[i] as string
      const got = segments[i] as string
      if (want.startsWith(':')) {
        if (got === '') ok = false
        else params[want.slice(1)] = got
      } else if (want !== got) {
        ok = false
      }
    }
    if (ok) return { route, params }
  }
  return undefined
}
