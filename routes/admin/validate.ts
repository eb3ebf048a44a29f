/**
 * `POST /admin/v1/validate`: the gate's judgement without the commit. The same evaluation the
 * commit path runs (`evaluateCommit` with the table's effective policy), against the metadata the
 * caller gives or the table as the upstream serves it to the caller. Nothing is ever forwarded.
 */
import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { ERRORS, GateError } from '../../src/errors.js'
import { evaluateCommit } from '../../src/engine/evaluate-commit.js'
import { expectsNoTable } from '../../src/gate/judge-write.js'
import { checkOverrideToken, evaluateUnder, OVERRIDE_HEADER, overrideToWire, type OverrideGrant } from '../../src/gate/override.js'
import { parseTableMetadata } from '../../src/iceberg/parse.js'
import type { TableMetadata } from '../../src/iceberg/types.js'
import { countBaseLoads } from '../../src/metrics/gate-metrics.js'
import { recordDecision } from '../../src/metrics/iceguard-metrics.js'
import { ref } from '../../src/schemas/ref.js'
import {
  evaluationToWire, transactionToWire, ValidateRequestSchema, ValidateResponseSchema, type TableValidation, type ValidateResponse
} from '../../src/schemas/validate.js'
import { metadataOrThrow } from './admin-context.js'
import { BAD_INPUT, TABLE_READ_ERRORS } from './common-schemas.js'
import type { AdminScope } from './admin-context.js'
import { readTableIdentifier, sameTable, tableName, type TableRef } from '../../src/iceberg/rest-path.js'

/** A table identifier read as the gate reads it (`readTableIdentifier`), or a 400 naming `at`. */
function identifier (v: unknown, at: string): { namespace: string[], name: string } {
  const id = readTableIdentifier(v)
  if ('problem' in id) throw new GateError(ERRORS.BAD_REQUEST, `Invalid request: ${at} ${id.problem}`)
  return id
}

export default async function validateRoute (app: FastifyInstance, { scope }: { scope: AdminScope }): Promise<void> {
  const { options, tables } = scope
  const load = countBaseLoads(tables.load, options.metrics)

  async function baseFor (table: TableRef, request: Record<string, unknown>, given: unknown, headers: Parameters<typeof tables.load>[1]): Promise<TableMetadata | undefined> {
    if (given !== undefined) {
      const { metadata, issues } = parseTableMetadata(given)
      if (metadata === undefined) {
        const first = issues[0]
        throw new GateError(ERRORS.BAD_REQUEST, `Invalid request: metadata${first === undefined ? ' is unreadable' : `${first.at === '' ? '' : `.${first.at}`}: ${first.message}`}`,
          { details: issues.slice(0, 20).map(i => `${i.at}: ${i.message}`) })
      }
      return metadata
    }
    const loaded = await load(table, headers)
    // The commit that completes a staged create: the table does not exist yet, as at the gate.
    if (loaded.status === 404 && expectsNoTable(request)) return undefined
    return metadataOrThrow(table, loaded)
  }

  function judge (table: TableRef, request: Record<string, unknown>, base: TableMetadata | undefined, grant: OverrideGrant | undefined): TableValidation {
    // As the gate: the token's rules become warnings for its own table only.
    // As the gate: the views that read the table are the rule's and the answer's.
    const dependents = options.views?.dependentsOf(table)
    const evaluation = evaluateUnder(options.policy.resolve(table), grant, table, settings => evaluateCommit({
      base, request, settings, target: 'table', ...(dependents !== undefined && { dependents })
    }))
    return { table: { namespace: [...table.namespace], name: table.name }, ...evaluationToWire({ ...evaluation, ...(dependents !== undefined && { dependents }) }) }
  }

  app.withTypeProvider<TypeBoxTypeProvider>().post('/validate', {
    // A dry run: nothing is written anywhere.
    config: { adminAccess: 'read' },
    schema: {
      operationId: 'validateCommit',
      tags: ['admin'],
      summary: 'Dry-run a commit: would the gate allow it?',
      description: 'Runs the gate\'s evaluation of a CommitTableRequest (with `table`, or the request\'s `identifier`) or a CommitTransactionRequest, ' +
        'and answers the verdict with every finding. With `metadata` nothing is loaded; without it each table is loaded from the upstream with the ' +
        'caller\'s catalog credential. Nothing is ever forwarded.',
      body: ref(ValidateRequestSchema),
      response: { 200: ref(ValidateResponseSchema), ...BAD_INPUT, ...TABLE_READ_ERRORS }
    }
  }, async (request) => {
    // Evaluate the lossless tree, as the commit path does; the validated plain copy only steers.
    const lossless = request.losslessBody as Record<string, unknown>
    const body = request.body
    const commit = lossless.request as Record<string, unknown>
    const prefix = body.prefix
    const overrideOf = (tables: readonly TableRef[]): OverrideGrant | undefined => {
      const read = checkOverrideToken(request.headers[OVERRIDE_HEADER], scope.verifyOverride, tables)
      if ('refusal' in read) throw new GateError(ERRORS.BAD_REQUEST, read.refusal)
      return read.grant
    }

    let response: ValidateResponse
    if ('table-changes' in body.request) {
      if (body.metadata !== undefined || body.table !== undefined) {
        throw new GateError(ERRORS.BAD_REQUEST, 'Invalid request: a CommitTransactionRequest takes neither table nor metadata; each table change names its table in `identifier`')
      }
      const changes = commit['table-changes'] as unknown[]
      const entries = changes.map((change, i) => {
        const table: TableRef = { prefix, ...identifier((change as Record<string, unknown>).identifier, `request.table-changes[${i}].identifier`) }
        return { table, request: change as Record<string, unknown> }
      })
      const grant = overrideOf(entries.map(e => e.table))
      const bases = await Promise.all(entries.map(async e => await baseFor(e.table, e.request, undefined, request.headers)))
      response = withGrant(transactionToWire(entries.map((e, i) => judge(e.table, e.request, bases[i], grant))), grant)
    } else {
      const fromBody = body.table === undefined ? undefined : identifier(body.table, 'table')
      // As at the gate: optional, and a null identifier reads as absent (Java's hasNonNull).
      const fromRequest = commit.identifier === undefined || commit.identifier === null ? undefined : identifier(commit.identifier, 'request.identifier')
      if (fromBody !== undefined && fromRequest !== undefined && !sameTable(fromBody, fromRequest)) {
        throw new GateError(ERRORS.BAD_REQUEST, `Invalid request: table names ${tableName(fromBody)} but request.identifier names ${tableName(fromRequest)}`)
      }
      const ident = fromBody ?? fromRequest
      if (ident === undefined) {
        throw new GateError(ERRORS.BAD_REQUEST, 'Invalid request: name the table in `table` (or in request.identifier)')
      }
      const table: TableRef = { prefix, ...ident }
      const grant = overrideOf([table])
      const base = await baseFor(table, commit, lossless.metadata, request.headers)
      response = withGrant(judge(table, commit, base, grant), grant)
    }
    recordDecision({ verdict: response.verdict, findings: response.findings }, 'dry-run', options.metrics)
    return response
  })
}

function withGrant (response: ValidateResponse, grant: OverrideGrant | undefined): ValidateResponse {
  return grant === undefined ? response : { ...response, override: overrideToWire(grant) }
}
