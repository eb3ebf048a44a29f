/** `GET /admin/v1/namespaces/{namespace}/tables/{table}/schemas`: schema history and field-id lineage. */
import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { ref } from '../../src/schemas/ref.js'
import { Type } from '@sinclair/typebox'
import { ERRORS, GateError } from '../../src/errors.js'
import { tableName } from '../../src/iceberg/rest-path.js'
import { buildSchemaHistory, SchemaHistoryQuery, SchemaHistorySchema } from '../../src/schemas/schema-history.js'
import { namespaceFromPath } from './admin-context.js'
import { PrefixQuery, TABLE_READ_ERRORS, TablePathParams } from './common-schemas.js'
import type { AdminScope } from './admin-context.js'

export default async function schemaHistoryRoute (app: FastifyInstance, { scope }: { scope: AdminScope }): Promise<void> {
  app.withTypeProvider<TypeBoxTypeProvider>().get('/namespaces/:namespace/tables/:table/schemas', {
    schema: {
      operationId: 'getSchemaHistory',
      tags: ['admin'],
      summary: 'Schema history and field lineage of a table',
      description: 'Every schema of the table with its diff from the one before; for every field id every name it had, the schema that added it ' +
        'and the one that dropped it; and the names dropped columns left behind (the ones a later add could reuse). Read as the caller. ' +
        'Schemas are paged as the REST spec pages listTables: `pageSize` schemas per answer, `next-page-token` for the next as `pageToken`.',
      params: TablePathParams,
      querystring: Type.Composite([PrefixQuery, SchemaHistoryQuery], { additionalProperties: false }),
      response: { 200: ref(SchemaHistorySchema), ...TABLE_READ_ERRORS }
    }
  }, async (request) => {
    const table = { prefix: request.query.prefix, namespace: namespaceFromPath(request.params.namespace), name: request.params.table }
    const metadata = await scope.tables.metadata(table, request.headers)
    const { pageToken, pageSize } = request.query
    const history = buildSchemaHistory({ namespace: table.namespace, name: table.name }, metadata, {
      ...(pageToken !== undefined && { pageToken }),
      ...(pageSize !== undefined && { pageSize })
    })
    if (history === undefined) throw new GateError(ERRORS.BAD_REQUEST, `Cannot read pageToken: "${pageToken ?? ''}" is not a page token of table ${tableName(table)}'s schemas`)
    return history
  })
}
