/** `GET /admin/v1/rules`: the rule catalogue, like `buf config ls-breaking-rules`. */
import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { ruleCatalogue } from '../../src/engine/rules/index.js'
import { ref } from '../../src/schemas/ref.js'
import { RuleCatalogueSchema, type RuleCatalogue } from '../../src/schemas/rule-catalogue.js'

export default async function rulesRoute (app: FastifyInstance): Promise<void> {
  app.withTypeProvider<TypeBoxTypeProvider>().get('/rules', {
    schema: {
      operationId: 'listRules',
      tags: ['admin'],
      summary: 'The rule catalogue',
      description: 'Every rule with its id, category (spec rules are always on), default severity, purpose and documentation link.',
      response: { 200: ref(RuleCatalogueSchema) }
    }
  }, async (): Promise<RuleCatalogue> => ({
    rules: ruleCatalogue().map(r => ({ id: r.id, category: r.category, 'default-severity': r.defaultSeverity, purpose: r.purpose, doc: r.doc }))
  }))
}
