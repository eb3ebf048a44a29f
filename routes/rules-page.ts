/**
 * `GET /rules/{RULE_ID}`: a rule's documentation as an HTML page (src/engine/rules/rule-page.ts), the
 * target of the links in every refusal, so a person reading an exception from Spark or PyIceberg
 * can open it. An id no rule has is a 404 ErrorModel.
 */
import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { ERRORS, GateError } from '../src/errors.js'
import { rulePage } from '../src/engine/rules/rule-page.js'
import { IcebergErrorResponseSchema } from '../src/schemas/error-model.js'
import { addSharedSchemas } from '../src/schemas/index.js'
import { ref } from '../src/schemas/ref.js'

export default async function rulesPage (app: FastifyInstance): Promise<void> {
  addSharedSchemas(app)
  app.withTypeProvider<TypeBoxTypeProvider>().get('/rules/:ruleId', {
    schema: {
      operationId: 'rulePage',
      tags: ['rules'],
      summary: 'A rule\'s documentation, as an HTML page',
      description: 'The section of docs/rules.md for the rule: why it exists, what trips it, what to do instead. Refusals link here ' +
        '(under ICEGUARD_PUBLIC_URL, or the origin the request was sent to).',
      params: Type.Object({ ruleId: Type.String({ description: 'A rule id, e.g. COLUMN_NO_DROP.' }) }),
      response: {
        200: { description: 'The rule\'s page.', content: { 'text/html': { schema: { type: 'string' } } } },
        404: ref(IcebergErrorResponseSchema, { description: 'No rule has this id.' })
      }
    }
  }, async (request, reply) => {
    const page = rulePage(request.params.ruleId)
    if (page === undefined) {
      throw new GateError(ERRORS.NOT_FOUND, `Cannot show rule ${JSON.stringify(request.params.ruleId).slice(0, 120)}: no rule has this id (GET /admin/v1/rules lists them)`)
    }
    return reply.type('text/html; charset=utf-8').header('cache-control', 'public, max-age=300').send(page)
  })
}
