/**
 * `POST /admin/v1/namespaces/{namespace}/tables/{table}/compatibility`: a schema, ids optional,
 * judged against the table as the caller can read it, under its effective policy. The schema is
 * made installable by the pure core (src/evolve/proposed-schema.ts), the exact CommitTableRequest
 * is built as schema changes build it, and the gate's evaluation judges it; nothing is committed.
 * A break-glass token is honoured exactly as on a commit (src/gate/override.ts).
 */
import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { ERRORS, GateError } from '../../src/errors.js'
import { buildCommitRequest } from '../../src/evolve/index.js'
import { proposeSchema } from '../../src/evolve/proposed-schema.js'
import { evaluateCommit } from '../../src/engine/evaluate-commit.js'
import { checkOverrideToken, evaluateUnder, OVERRIDE_HEADER, overrideToWire } from '../../src/gate/override.js'
import { recordDecision } from '../../src/metrics/iceguard-metrics.js'
import { changeToWire } from '../../src/schemas/change.js'
import { CompatibilityRequestSchema, CompatibilityResponseSchema, type CompatibilityResponse } from '../../src/schemas/compatibility.js'
import { findingToWire } from '../../src/schemas/finding.js'
import { toPlainJson } from '../../src/schemas/plain-json.js'
import { ref } from '../../src/schemas/ref.js'
import { namespaceFromPath } from './admin-context.js'
import { tableName, type TableRef } from '../../src/iceberg/rest-path.js'
import { PrefixQuery, TABLE_READ_ERRORS, TablePathParams } from './common-schemas.js'
import type { AdminScope } from './admin-context.js'

export default async function compatibilityRoute (app: FastifyInstance, { scope }: { scope: AdminScope }): Promise<void> {
  app.withTypeProvider<TypeBoxTypeProvider>().post('/namespaces/:namespace/tables/:table/compatibility', {
    // A question, not a change: nothing is committed, so read access is enough.
    config: { adminAccess: 'read' },
    schema: {
      operationId: 'checkSchemaCompatibility',
      tags: ['admin'],
      summary: 'Is this schema compatible with the table? (schema only, field ids optional)',
      description: 'Judges the schema as the table\'s next schema under its effective policy, exactly as the gate would judge the commit that installs it, ' +
        'and answers that commit (`request`). Fields without ids are matched by name within their struct, as union-by-name matches; unmatched ones get ' +
        'fresh ids; fields left out are dropped. The table is loaded with the caller\'s catalog credential. Nothing is committed.',
      params: TablePathParams,
      querystring: PrefixQuery,
      body: ref(CompatibilityRequestSchema),
      response: { 200: ref(CompatibilityResponseSchema), ...TABLE_READ_ERRORS }
    }
  }, async (request): Promise<CompatibilityResponse> => {
    const table: TableRef = { prefix: request.query.prefix, namespace: namespaceFromPath(request.params.namespace), name: request.params.table }
    const read = checkOverrideToken(request.headers[OVERRIDE_HEADER], scope.verifyOverride, [table])
    if ('refusal' in read) throw new GateError(ERRORS.BAD_REQUEST, read.refusal)
    const metadata = await scope.tables.metadata(table, request.headers)
    const proposed = proposeSchema(metadata, request.body.schema)
    if ('problem' in proposed) throw new GateError(ERRORS.BAD_REQUEST, `Invalid request: schema: ${proposed.problem}`)
    const { result } = proposed
    const identifier = { namespace: [...table.namespace], name: table.name }
    const commit = buildCommitRequest(metadata, result, identifier)
    // An unchanged schema is judged as the empty commit: nothing to find, nothing to send.
    const evaluation = evaluateUnder(scope.options.policy.resolve(table), read.grant, table,
      settings => evaluateCommit({ base: metadata, request: commit ?? { requirements: [], updates: [] }, settings, target: 'table' }))
    recordDecision({ verdict: evaluation.verdict, findings: evaluation.findings }, 'dry-run', scope.options.metrics)
    request.log.debug({ table: tableName(table), verdict: evaluation.verdict }, 'compatibility checked')
    return {
      table: identifier,
      compatible: evaluation.verdict === 'allow' || evaluation.verdict === 'warn',
      verdict: evaluation.verdict,
      findings: evaluation.findings.map(findingToWire),
      changes: evaluation.changes.map(changeToWire),
      summary: evaluation.summary,
      explanation: evaluation.explanation,
      ...(commit !== undefined && { request: toPlainJson(commit) as CompatibilityResponse['request'] }),
      'schema-id': result.schema.schemaId as number,
      'last-column-id': result.lastColumnId,
      warnings: [...result.warnings],
      ...(evaluation.override !== undefined && { override: overrideToWire(evaluation.override) })
    }
  })
}
