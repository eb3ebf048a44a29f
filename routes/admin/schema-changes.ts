/**
 * `POST /admin/v1/namespaces/{namespace}/tables/{table}/schema-changes` and `…/schema-changes/plan`:
 * schema evolution without writing field ids. The table is loaded as the caller, the changes are
 * applied by the pure core (src/evolve), and the exact CommitTableRequest is handed to the gate, the
 * same function every commit through the proxy goes through: the policy applies, the decision is
 * audited under the verified admin principal, and the catalog authorizes the caller with the
 * catalog credential they sent for it (never the admin credential: admin-auth-hook.ts).
 *
 * A lost race (409: the requirements no longer hold) is retried a bounded number of times by
 * reloading the table and applying the same changes to the schema that won, as Java's
 * `SchemaUpdate` commit does; the winner's fields keep their ids and ours get fresh ones above it.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { stringify } from 'lossless-json'
import type { IncomingHttpHeaders } from 'node:http'
import { adminPrincipal, type AdminAccess } from '../../src/auth/access.js'
import { ERRORS, GateError } from '../../src/errors.js'
import {
  applySchemaChanges, buildCommitRequest, planFromContract, readSchemaChanges, schemaChangeToWire,
  type ChangeError, type SchemaChangeOp, type Unresolved
} from '../../src/evolve/index.js'
import type { GateOutcome } from '../../src/gate/commit-gate.js'
import { evaluateCommit } from '../../src/engine/evaluate-commit.js'
import { checkOverrideToken, evaluateUnder, OVERRIDE_HEADER, overrideToWire } from '../../src/gate/override.js'
import { tablePath } from '../../src/gate/load-base.js'
import { parseUpstreamBody } from '../../src/json/parse-commit-body.js'
import { parseTableMetadata } from '../../src/iceberg/parse.js'
import { schemaToJson } from '../../src/iceberg/print.js'
import type { Schema, TableMetadata } from '../../src/iceberg/types.js'
import { parseContract, type Contract } from '../../src/policy/contract.js'
import { formatIssue } from '../../src/policy/yaml-source.js'
import { changeToWire } from '../../src/schemas/change.js'
import { IcebergErrorResponseSchema } from '../../src/schemas/error-model.js'
import { findingToWire } from '../../src/schemas/finding.js'
import { toPlainJson } from '../../src/schemas/plain-json.js'
import { ref } from '../../src/schemas/ref.js'
import {
  PlanQuerySchema, PlanRequestSchema, PlanResponseSchema, SchemaChangesQuerySchema, SchemaChangesRequestSchema,
  SchemaChangesResponseSchema, type PlanResponse, type SchemaChangesResponse
} from '../../src/schemas/schema-changes.js'
import { upstreamHeaders } from '../upstream-headers.js'
import { namespaceFromPath } from './admin-context.js'
import { TABLE_READ_ERRORS, TablePathParams } from './common-schemas.js'
import type { AdminScope } from './admin-context.js'
import { isObject } from '../../src/iceberg/json-values.js'
import { tableName, type TableRef } from '../../src/iceberg/rest-path.js'

/** Commits sent at most: the first and two re-applications after a lost race (Java retries 4 times by default). */
const MAX_ATTEMPTS = 3

/** Headers of the caller that belong to their own request, not to the commit iceguard sends for them. */
const NOT_FORWARDED = new Set(['content-length', 'content-encoding', 'content-type', 'transfer-encoding', 'idempotency-key', 'expect'])

const error = (description: string) => ref(IcebergErrorResponseSchema, { description })
const COMMIT_ERRORS = {
  ...TABLE_READ_ERRORS,
  400: error('Bad input, a change that cannot be applied (the message names it and its path), or the gate refused the commit (one line per finding in `stack`).'),
  409: error('Concurrent commits kept winning; the changes were re-applied and retried, then given up.')
}

/** An answer to send as it is: the gate's own refusal, or the upstream's answer to the commit. */
interface Relay { readonly statusCode: number, readonly headers: Readonly<Record<string, string | string[] | undefined>>, readonly body: unknown }

type Outcome = Omit<SchemaChangesResponse, 'table'>

export default async function schemaChangesRoutes (app: FastifyInstance, { scope }: { scope: AdminScope }): Promise<void> {
  const typed = app.withTypeProvider<TypeBoxTypeProvider>()

  /**
   * Load → prepare changes → apply → build → judge → (commit through the gate), with the bounded
   * retry. `prepare` runs on every attempt, against the table as it is then.
   */
  async function evolve (
    request: FastifyRequest,
    table: TableRef,
    prepare: (metadata: TableMetadata) => readonly SchemaChangeOp[],
    commit: boolean
  ): Promise<Outcome | Relay> {
    const identifier = { namespace: [...table.namespace], name: table.name }
    // The token is read here as the gate reads it, so the dry run, the answer and the commit agree;
    // a token that does not verify stops the request before anything is loaded.
    const read = checkOverrideToken(request.headers[OVERRIDE_HEADER], scope.verifyOverride, [table])
    if ('refusal' in read) throw new GateError(ERRORS.BAD_REQUEST, read.refusal)
    const warnings: string[] = []
    for (let attempt = 1; ; attempt++) {
      const metadata = await scope.tables.metadata(table, request.headers)
      const changes = prepare(metadata)
      const result = applySchemaChanges(metadata, changes)
      if (result.errors.length > 0) throw refused(table, result.errors)
      warnings.push(...result.warnings.filter(w => !warnings.includes(w)))
      const body = buildCommitRequest(metadata, result, identifier)
      if (body === undefined) {
        return noopOutcome(metadata, result.schema, warnings, commit, attempt - 1)
      }
      const evaluation = evaluateUnder(scope.options.policy.resolve(table), read.grant, table,
        settings => evaluateCommit({ base: metadata, request: body, settings, target: 'table' }))
      const judged = {
        committed: false,
        noop: false,
        'dry-run': !commit,
        request: toPlainJson(body) as Outcome['request'],
        verdict: evaluation.verdict,
        findings: evaluation.findings.map(findingToWire),
        diff: evaluation.changes.map(changeToWire),
        summary: evaluation.summary,
        'schema-id': result.schema.schemaId as number,
        'last-column-id': result.lastColumnId,
        schema: toPlainJson(schemaToJson(result.schema)) as Outcome['schema'],
        warnings,
        attempts: attempt - 1,
        ...(evaluation.override !== undefined && { override: overrideToWire(evaluation.override) })
      }
      if (!commit) return judged
      const outcome = await sendThroughGate(request, table, Buffer.from(stringify(body) ?? '', 'utf8'))
      const status = outcome.type === 'answer' ? outcome.answer.statusCode : outcome.response.statusCode
      // 409: a concurrent commit changed the table after it was read (the gate's check or the catalog's).
      if (status === 409 && attempt < MAX_ATTEMPTS) {
        request.log.info({ table: tableName(table), attempt }, 'schema change lost a race; re-applying to the new schema')
        continue
      }
      if (outcome.type === 'answer') return { statusCode: status, headers: outcome.answer.headers, body: outcome.answer.body }
      if (status < 200 || status >= 300) return { statusCode: status, headers: outcome.response.headers, body: outcome.response.body }
      return { ...judged, ...committedState(outcome.response.body), committed: true, attempts: attempt }
    }
  }

  async function sendThroughGate (request: FastifyRequest, table: TableRef, rawBody: Buffer): Promise<GateOutcome> {
    const headers: IncomingHttpHeaders = { 'content-type': 'application/json' }
    for (const [k, v] of Object.entries(request.headers)) if (!NOT_FORWARDED.has(k)) headers[k] = v
    const flat = upstreamHeaders(request, { 'content-type': 'application/json' })
    const forwardHeaders: string[] = []
    for (let i = 0; i < flat.length; i += 2) {
      if (!NOT_FORWARDED.has((flat[i] as string).toLowerCase()) || (flat[i] as string).toLowerCase() === 'content-type') forwardHeaders.push(flat[i] as string, flat[i + 1] as string)
    }
    return await request.server.gate.handle({
      kind: 'update-table',
      ident: { prefix: table.prefix, namespace: table.namespace, table: table.name },
      method: 'POST',
      path: tablePath(table),
      rawBody,
      headers,
      forwardHeaders,
      requestId: String(request.id),
      ...(request.adminIdentity !== undefined && { principal: adminPrincipal(request.adminIdentity) })
    })
  }

  function send (reply: FastifyReply, out: Outcome | Relay, extra: Record<string, unknown>, table: TableRef): void {
    if ('statusCode' in out) {
      reply.code(out.statusCode)
      for (const name of ['content-type', 'retry-after', 'www-authenticate', 'x-iceguard-warnings']) {
        const v = out.headers[name]
        if (v !== undefined) reply.header(name, v)
      }
      reply.send(out.body)
      return
    }
    reply.send({ table: { namespace: [...table.namespace], name: table.name }, ...out, ...extra })
  }

  typed.post('/namespaces/:namespace/tables/:table/schema-changes', {
    config: { adminAccess: dryRunOr('dry-run', 'true', 'read', 'commit') },
    schema: {
      operationId: 'applySchemaChanges',
      tags: ['admin'],
      summary: 'Evolve a table\'s schema with high-level changes (no field ids to write)',
      description: 'Applies the changes in order to the current schema (fresh ids above last-column-id for every new field, nested ones included; ' +
        'only the spec\'s promotions; an equal older schema reused; an unchanged schema commits nothing), builds the exact CommitTableRequest ' +
        '(assert-table-uuid, assert-last-assigned-field-id, assert-current-schema-id; add-schema, set-current-schema -1) and sends it through the gate ' +
        'with the caller\'s catalog credential (never the admin credential). `?dry-run=true` answers the verdict and the request without committing. A lost race is re-applied and retried ' +
        `up to ${MAX_ATTEMPTS} commits in all.`,
      params: TablePathParams,
      querystring: SchemaChangesQuerySchema,
      body: ref(SchemaChangesRequestSchema),
      response: { 200: ref(SchemaChangesResponseSchema), ...COMMIT_ERRORS }
    }
  }, async (request, reply) => {
    const table: TableRef = { prefix: request.query.prefix, namespace: namespaceFromPath(request.params.namespace), name: request.params.table }
    const { changes, problems } = readSchemaChanges(request.body.changes)
    if (changes === undefined) throw invalid(problems)
    const out = await evolve(request, table, () => changes, request.query['dry-run'] !== 'true')
    send(reply, out, {}, table)
  })

  interface PlanInput { readonly namespace: string, readonly table: string, readonly prefix?: string, readonly contract?: unknown }
  const plan = async (request: FastifyRequest, reply: FastifyReply, input: PlanInput, apply: boolean): Promise<void> => {
    const table: TableRef = { prefix: input.prefix, namespace: namespaceFromPath(input.namespace), name: input.table }
    const contract = contractFrom(input.contract, table, scope)
    let planned: { changes: SchemaChangeOp[], unresolved: Unresolved[] } = { changes: [], unresolved: [] }
    // Planned afresh on every attempt: after a lost race the winner may already have done part of it.
    const out = await evolve(request, table, (metadata) => {
      planned = planFromContract(metadata, contract)
      return planned.changes
    }, apply)
    const extra: Pick<PlanResponse, 'changes' | 'unresolved'> = {
      changes: planned.changes.map(c => toPlainJson(schemaChangeToWire(c)) as PlanResponse['changes'][number]),
      unresolved: planned.unresolved
    }
    send(reply, out, extra, table)
  }

  const planSchema = (apply: boolean) => ({
    operationId: apply ? 'applySchemaPlan' : 'planSchemaChanges',
    tags: ['admin'],
    summary: apply ? 'Commit the changes that bring a table into conformance with a contract' : 'The changes that would bring a table into conformance with a contract',
    description: 'Plans from a contract (the policy\'s contract format, as YAML text or its JSON form; absent: the contract the policy assigns to the table): ' +
      'add missing columns, promote promotable ones, make columns optional, set docs, and in strict mode drop unlisted columns. What no safe evolution ' +
      'can do is listed in `unresolved`. Answers the changes, the exact commit body and the gate\'s verdict' +
      (apply ? '; commits it through the gate.' : '; `?apply=true` (or POST …/plan/apply) commits it.'),
    params: TablePathParams,
    querystring: PlanQuerySchema,
    body: ref(PlanRequestSchema),
    response: { 200: ref(PlanResponseSchema), ...COMMIT_ERRORS }
  })

  typed.post('/namespaces/:namespace/tables/:table/schema-changes/plan', { config: { adminAccess: dryRunOr('apply', 'true', 'commit', 'read') }, schema: planSchema(false) },
    async (request, reply) => { await plan(request, reply, planInput(request), request.query.apply === 'true') })
  typed.post('/namespaces/:namespace/tables/:table/schema-changes/plan/apply', { config: { adminAccess: 'commit' }, schema: planSchema(true) },
    async (request, reply) => { await plan(request, reply, planInput(request), true) })
}

/** The access an endpoint needs when one query parameter decides between looking and committing. */
function dryRunOr (parameter: string, value: string, whenSet: AdminAccess, otherwise: AdminAccess): (request: FastifyRequest) => AdminAccess {
  return (request) => (request.query as Record<string, unknown>)[parameter] === value ? whenSet : otherwise
}

function planInput (request: { params: { namespace: string, table: string }, query: { prefix?: string }, body: { contract?: unknown } }): { namespace: string, table: string, prefix?: string, contract?: unknown } {
  return { namespace: request.params.namespace, table: request.params.table, prefix: request.query.prefix, contract: request.body.contract }
}

function invalid (problems: readonly string[]): GateError {
  const more = problems.length > 1 ? ` (and ${problems.length - 1} more problem${problems.length > 2 ? 's' : ''})` : ''
  return new GateError(ERRORS.BAD_REQUEST, `Invalid request: ${problems[0] ?? 'unreadable changes'}${more}`, { details: [...problems] })
}

function refused (table: TableRef, errors: readonly ChangeError[]): GateError {
  const first = errors[0] as ChangeError
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more refused change${errors.length > 2 ? 's' : ''})` : ''
  return new GateError(ERRORS.VALIDATION, `Cannot evolve ${tableName(table)}: ${first.message}${more}; nothing was committed`,
    { details: errors.map(e => e.message) })
}

function noopOutcome (metadata: TableMetadata, schema: Schema, warnings: string[], commit: boolean, attempts: number): Outcome {
  return {
    committed: false,
    noop: true,
    'dry-run': !commit,
    verdict: 'allow',
    findings: [],
    diff: [],
    summary: 'no changes: the schema already is what the changes ask for; nothing was committed',
    'schema-id': metadata.currentSchemaId,
    'last-column-id': metadata.lastColumnId,
    schema: toPlainJson(schemaToJson(schema)) as Outcome['schema'],
    warnings,
    attempts
  }
}

/** What the catalog answered to the commit: the new metadata location and current schema. Nothing else is read (the answer may carry credentials). */
function committedState (raw: unknown): Partial<Outcome> {
  const parsed = Buffer.isBuffer(raw) ? parseUpstreamBody(raw) : undefined
  if (parsed === undefined || !parsed.ok || !isObject(parsed.value)) return {}
  const location = parsed.value['metadata-location']
  const out: Partial<Outcome> = typeof location === 'string' ? { 'metadata-location': location } : {}
  const { metadata } = parseTableMetadata(parsed.value.metadata)
  const current = metadata?.schemas.find(s => s.schemaId === metadata.currentSchemaId)
  if (metadata === undefined || current === undefined) return out
  return {
    ...out,
    'schema-id': metadata.currentSchemaId,
    'last-column-id': metadata.lastColumnId,
    schema: toPlainJson(schemaToJson(current)) as Outcome['schema']
  }
}

/** The contract from the body (YAML text or its JSON form), or the one the policy assigns to the table. */
function contractFrom (given: unknown, table: TableRef, scope: AdminScope): Contract {
  if (given === undefined) {
    const assigned = scope.options.policy.resolve(table).contract
    if (assigned === undefined) {
      throw new GateError(ERRORS.BAD_REQUEST, `Invalid request: send a contract; the policy assigns none to ${tableName(table)}`)
    }
    return assigned
  }
  // JSON is YAML: one reader for both forms, with its line-and-column messages.
  const text = typeof given === 'string' ? given : JSON.stringify(given)
  const { contract, errors } = parseContract(text, 'request')
  if (contract === undefined) {
    const lines = errors.map(formatIssue)
    throw new GateError(ERRORS.BAD_REQUEST, `Invalid contract: ${lines[0] ?? 'unreadable'}${lines.length > 1 ? ` (and ${lines.length - 1} more)` : ''}`, { details: lines })
  }
  return contract
}
