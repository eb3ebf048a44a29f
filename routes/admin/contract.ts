/** `GET /admin/v1/namespaces/{namespace}/tables/{table}/contract`: the table's contract and whether the current schema meets it. */
import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { ERRORS, GateError } from '../../src/errors.js'
import { checkContract } from '../../src/contract/contract.js'
import { ContractReportSchema, contractReport } from '../../src/schemas/contract-report.js'
import { ref } from '../../src/schemas/ref.js'
import { namespaceFromPath } from './admin-context.js'
import { PrefixQuery, TABLE_READ_ERRORS, TablePathParams } from './common-schemas.js'
import type { AdminScope } from './admin-context.js'
import { tableName } from '../../src/iceberg/rest-path.js'

export default async function contractRoute (app: FastifyInstance, { scope }: { scope: AdminScope }): Promise<void> {
  app.withTypeProvider<TypeBoxTypeProvider>().get('/namespaces/:namespace/tables/:table/contract', {
    schema: {
      operationId: 'getTableContract',
      tags: ['admin'],
      summary: 'The table\'s contract and whether its current schema meets it',
      description: 'The contract the effective policy assigns to the table, checked against the current schema (read as the caller), with every violation. ' +
        '404 when the table does not exist or no contract applies to it.',
      params: TablePathParams,
      querystring: PrefixQuery,
      response: { 200: ref(ContractReportSchema), ...TABLE_READ_ERRORS }
    }
  }, async (request) => {
    const table = { prefix: request.query.prefix, namespace: namespaceFromPath(request.params.namespace), name: request.params.table }
    // Read the table first: a caller the catalog refuses learns nothing, not even whether a contract exists.
    const metadata = await scope.tables.metadata(table, request.headers)
    const contract = scope.options.policy.resolve(table).contract
    if (contract === undefined) {
      throw new GateError(ERRORS.NOT_FOUND, `No contract applies to table ${tableName(table)}: the policy assigns none (see GET /admin/v1/policy/effective?table=${tableName(table)})`)
    }
    const current = metadata.schemas.find(s => s.schemaId === metadata.currentSchemaId)
    if (current === undefined) {
      throw new GateError(ERRORS.UPSTREAM_BAD_RESPONSE, `Cannot check the contract of ${tableName(table)}: its metadata has no current schema ${metadata.currentSchemaId}`)
    }
    const violations = checkContract(contract, current, metadata.formatVersion)
    return contractReport({ namespace: table.namespace, name: table.name }, contract, metadata.currentSchemaId, violations)
  })
}
