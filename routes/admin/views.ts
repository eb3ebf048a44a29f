/**
 * The view index (docs/view-index.md): `GET /admin/v1/namespaces/{ns}/tables/{t}/dependents`, the
 * views that read a table, and `GET /admin/v1/views/index`, the index's state. The table is read
 * as the caller first, so nobody learns of a table's readers who could not load the table.
 */
import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { ref } from '../../src/schemas/ref.js'
import { DependentsSchema, dependentToWire, ViewIndexStatusSchema } from '../../src/schemas/view-index.js'
import { namespaceFromPath, type AdminScope } from './admin-context.js'
import { PrefixQuery, TABLE_READ_ERRORS, TablePathParams } from './common-schemas.js'

export default async function viewIndexRoutes (app: FastifyInstance, { scope }: { scope: AdminScope }): Promise<void> {
  const views = scope.options.views
  if (views === undefined) return
  const typed = app.withTypeProvider<TypeBoxTypeProvider>()

  typed.get('/namespaces/:namespace/tables/:table/dependents', {
    schema: {
      operationId: 'getTableDependents',
      tags: ['admin'],
      summary: 'Views that read a table',
      description: 'Every view of the catalog the view index knows to read the table: its identifier, dialects, the columns it reads ' +
        '(name and field id as of indexing), whether it selects `*`, and whether its SQL could be parsed. The table is read as the caller first. ' +
        '`complete` says whether the last crawl read every view of the catalog; views written through iceguard are known either way.',
      params: TablePathParams,
      querystring: PrefixQuery,
      response: { 200: ref(DependentsSchema), ...TABLE_READ_ERRORS }
    }
  }, async (request) => {
    const table = { prefix: request.query.prefix, namespace: namespaceFromPath(request.params.namespace), name: request.params.table }
    await scope.tables.metadata(table, request.headers)
    const status = views.status()
    return {
      views: views.dependentsOf(table).map(dependentToWire),
      ...(status.indexedAt !== undefined && { 'indexed-at': status.indexedAt }),
      complete: status.complete
    }
  })

  typed.get('/views/index', {
    schema: {
      operationId: 'getViewIndex',
      tags: ['admin'],
      summary: 'State of the view index',
      description: 'How many views the index holds, how many could not be parsed, when the catalog was last crawled, whether that crawl ' +
        'was complete, and what it could not read (paths and statuses; never SQL, bodies or credentials).',
      response: { 200: ref(ViewIndexStatusSchema) }
    }
  }, async () => {
    const s = views.status()
    return { views: s.views, unparsed: s.unparsed, ...(s.indexedAt !== undefined && { 'indexed-at': s.indexedAt }), complete: s.complete, errors: [...s.errors] }
  })
}
