/** `GET /admin/v1/decisions` (filtered, newest first, paged) and `GET /admin/v1/decisions/{id}`. */
import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { Cursor } from '../../src/decisions/decision-store.js'
import { ERRORS, GateError } from '../../src/errors.js'
import { DecisionListSchema, DecisionSchema, DECISION_VERDICTS, decisionToWire } from '../../src/schemas/decisions.js'
import { IcebergErrorResponseSchema } from '../../src/schemas/error-model.js'
import { ref } from '../../src/schemas/ref.js'
import { namespaceFromPath } from './admin-context.js'
import { BAD_INPUT } from './common-schemas.js'
import type { AdminScope } from './admin-context.js'
import { storeCall, STORE_ERRORS } from './store-call.js'

const DecisionQuery = Type.Object({
  namespace: Type.Optional(Type.String({ minLength: 1, description: 'Namespace levels joined by `%1F` or by dots; matches that namespace exactly.' })),
  table: Type.Optional(Type.String({ minLength: 1, description: 'Table (or view) name.' })),
  verdict: Type.Optional(Type.Union(DECISION_VERDICTS.map(v => Type.Literal(v)))),
  rule: Type.Optional(Type.String({ minLength: 1, description: 'Decisions with a finding of this rule id.' })),
  principal: Type.Optional(Type.String({ minLength: 1, description: 'Exactly as listed, e.g. `sub:alice`.' })),
  since: Type.Optional(Type.String({ minLength: 1, description: 'Decisions at or after this instant (RFC 3339, e.g. 2026-03-01T00:00:00Z).' })),
  until: Type.Optional(Type.String({ minLength: 1, description: 'Decisions before this instant (RFC 3339).' })),
  'page-token': Type.Optional(Type.String({ minLength: 1 })),
  'page-size': Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 }))
}, { additionalProperties: false })

const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 200 }) })

function readToken (token: string): Cursor {
  try {
    const [time, id] = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as [unknown, unknown]
    if (typeof time === 'number' && Number.isSafeInteger(time) && typeof id === 'string') return { time, id }
  } catch {}
  throw new GateError(ERRORS.BAD_REQUEST, 'Invalid request: querystring.page-token is not a token this API gave (pass next-page-token as it came)')
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/

function instant (name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined
  const ms = RFC3339.test(text) ? Date.parse(text) : Number.NaN
  if (Number.isNaN(ms)) throw new GateError(ERRORS.BAD_REQUEST, `Invalid request: querystring.${name} "${text}" is not an RFC 3339 date-time such as 2026-03-01T00:00:00Z`)
  return ms
}

function writeToken (c: Cursor): string {
  return Buffer.from(JSON.stringify([c.time, c.id])).toString('base64url')
}

export default async function decisionRoutes (app: FastifyInstance, { scope }: { scope: AdminScope }): Promise<void> {
  const decisions = scope.options.decisions
  if (decisions === undefined) return
  const typed = app.withTypeProvider<TypeBoxTypeProvider>()

  typed.get('/decisions', {
    schema: {
      operationId: 'listDecisions',
      tags: ['admin'],
      summary: 'Decisions of the gate, newest first',
      description: 'Every judged write, one decision per table: who, what, the verdict, each finding, the schema diff summary and the override used. ' +
        'Filters combine with AND. Follow `next-page-token` for older pages.',
      querystring: DecisionQuery,
      response: { 200: ref(DecisionListSchema), ...BAD_INPUT, ...STORE_ERRORS }
    }
  }, async (request) => {
    const q = request.query
    const since = instant('since', q.since)
    const until = instant('until', q.until)
    const page = await storeCall(async () => await decisions.store.list({
      ...(q.namespace !== undefined ? { namespace: namespaceFromPath(q.namespace) } : {}),
      ...(q.table !== undefined ? { table: q.table } : {}),
      ...(q.verdict !== undefined ? { verdict: q.verdict } : {}),
      ...(q.rule !== undefined ? { rule: q.rule } : {}),
      ...(q.principal !== undefined ? { principal: q.principal } : {}),
      ...(since !== undefined ? { since } : {}),
      ...(until !== undefined ? { until } : {})
    }, q['page-size'] ?? 50, q['page-token'] === undefined ? undefined : readToken(q['page-token'])), 'list decisions')
    return {
      decisions: page.decisions.map(decisionToWire),
      'next-page-token': page.next === undefined ? null : writeToken(page.next)
    }
  })

  typed.get('/decisions/:id', {
    schema: {
      operationId: 'getDecision',
      tags: ['admin'],
      summary: 'One decision',
      params: IdParams,
      response: {
        200: ref(DecisionSchema),
        404: ref(IcebergErrorResponseSchema, { description: 'No decision has this id (or it was deleted by retention).' }),
        ...STORE_ERRORS
      }
    }
  }, async (request) => {
    const found = await storeCall(async () => await decisions.store.get(request.params.id), 'read decision')
    if (found === undefined) throw new GateError(ERRORS.NOT_FOUND, `Cannot find decision ${request.params.id}: no such decision (unknown id, or older than the retention)`)
    return decisionToWire(found)
  })
}
