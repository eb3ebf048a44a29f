/** `POST /admin/v1/diff`: changes by field id between two schemas, or two schemas of a table. */
import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { diffSchemas } from '../../src/engine/diff/schema-diff.js'
import { summarizeChanges } from '../../src/engine/diff/summary.js'
import { ERRORS, GateError } from '../../src/errors.js'
import { parseSchema } from '../../src/iceberg/parse.js'
import type { Schema } from '../../src/iceberg/types.js'
import { changeToWire } from '../../src/schemas/change.js'
import { DiffRequestSchema, DiffResponseSchema, type DiffResponse } from '../../src/schemas/diff.js'
import { ref } from '../../src/schemas/ref.js'

import { TABLE_READ_ERRORS } from './common-schemas.js'
import type { AdminScope } from './admin-context.js'
import { tableName } from '../../src/iceberg/rest-path.js'

function schemaFrom (json: unknown, at: string): Schema {
  const { schema, issues } = parseSchema(json, at)
  if (schema === undefined || issues.length > 0) {
    const first = issues[0]
    throw new GateError(ERRORS.BAD_REQUEST, `Invalid request: ${first === undefined ? `${at} is unreadable` : `${first.at}: ${first.message}`}`,
      { details: issues.slice(0, 20).map(i => `${i.at}: ${i.message}`) })
  }
  return schema
}

export default async function diffRoute (app: FastifyInstance, { scope }: { scope: AdminScope }): Promise<void> {
  app.withTypeProvider<TypeBoxTypeProvider>().post('/diff', {
    // A dry run: nothing is written anywhere.
    config: { adminAccess: 'read' },
    schema: {
      operationId: 'diffSchemas',
      tags: ['admin'],
      summary: 'Diff two schemas by field id',
      description: 'Either two schemas (`from`, `to`), or a table and two of its schema ids (`table`, `from-schema-id`, `to-schema-id`, ' +
        'which defaults to the current schema; the table is read as the caller). A rename is a rename, never a drop and an add.',
      body: ref(DiffRequestSchema),
      response: { 200: ref(DiffResponseSchema), ...TABLE_READ_ERRORS }
    }
  }, async (request) => {
    const body = request.body
    const lossless = request.losslessBody as Record<string, unknown>
    let from: Schema
    let to: Schema
    if (body.table !== undefined) {
      if (body.from !== undefined || body.to !== undefined) {
        throw new GateError(ERRORS.BAD_REQUEST, 'Invalid request: give either from and to, or table with from-schema-id, not both')
      }
      if (body['from-schema-id'] === undefined) throw new GateError(ERRORS.BAD_REQUEST, 'Invalid request: body.from-schema-id is required with table')
      const table = { prefix: undefined, namespace: body.table.namespace, name: body.table.name }
      const metadata = await scope.tables.metadata(table, request.headers)
      const byId = (id: number): Schema => {
        const s = metadata.schemas.find(x => x.schemaId === id)
        if (s === undefined) {
          throw new GateError(ERRORS.BAD_REQUEST, `Invalid request: table ${tableName(table)} has no schema ${id} (its schema ids: ${metadata.schemas.map(x => x.schemaId).join(', ')})`)
        }
        return s
      }
      from = byId(body['from-schema-id'])
      to = byId(body['to-schema-id'] ?? metadata.currentSchemaId)
    } else {
      if (body.from === undefined || body.to === undefined) {
        throw new GateError(ERRORS.BAD_REQUEST, 'Invalid request: give from and to (two schemas), or table with from-schema-id')
      }
      if (body['from-schema-id'] !== undefined || body['to-schema-id'] !== undefined) {
        throw new GateError(ERRORS.BAD_REQUEST, 'Invalid request: from-schema-id and to-schema-id need table')
      }
      from = schemaFrom(lossless.from, 'from')
      to = schemaFrom(lossless.to, 'to')
    }
    const changes = diffSchemas(from, to)
    const out: DiffResponse = { changes: changes.map(changeToWire), summary: summarizeChanges(changes) }
    if (from.schemaId !== undefined) out['from-schema-id'] = from.schemaId
    if (to.schemaId !== undefined) out['to-schema-id'] = to.schemaId
    return out
  })
}
