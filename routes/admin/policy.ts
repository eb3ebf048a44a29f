/** `GET /admin/v1/policy/effective` and `POST /admin/v1/policy/reload`. */
import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { ERRORS, GateError } from '../../src/errors.js'
import { formatIssue } from '../../src/policy/yaml-source.js'
import { EffectivePolicySchema, effectivePolicyToWire, PolicyReloadSchema } from '../../src/schemas/effective-policy.js'
import { IcebergErrorResponseSchema } from '../../src/schemas/error-model.js'
import { ref } from '../../src/schemas/ref.js'
import { BAD_INPUT } from './common-schemas.js'
import type { AdminScope } from './admin-context.js'

const TableQuery = Type.Object({
  table: Type.String({ minLength: 3, description: 'Dotted table name: `namespace.table` (`a.b.table` for nested namespaces).', examples: ['db.orders'] })
}, { additionalProperties: false })

export default async function policyRoutes (app: FastifyInstance, { scope }: { scope: AdminScope }): Promise<void> {
  const typed = app.withTypeProvider<TypeBoxTypeProvider>()

  typed.get('/policy/effective', {
    schema: {
      operationId: 'getEffectivePolicy',
      tags: ['admin'],
      summary: 'The policy that applies to one table, and where each setting came from',
      querystring: TableQuery,
      response: { 200: ref(EffectivePolicySchema), ...BAD_INPUT }
    }
  }, async (request) => {
    const parts = request.query.table.split('.')
    const name = parts.pop() as string
    if (parts.length === 0 || name === '' || parts.some(p => p === '')) {
      throw new GateError(ERRORS.BAD_REQUEST, `Invalid request: querystring.table "${request.query.table}" must be namespace.table, e.g. db.orders`)
    }
    return effectivePolicyToWire(scope.options.policy.resolve({ namespace: parts, name }).explain())
  })

  typed.post('/policy/reload', {
    schema: {
      operationId: 'reloadPolicy',
      tags: ['admin'],
      summary: 'Reload the policy file',
      description: 'A policy that fails to load is reported (400, one line per problem) and the previous one stays in force.',
      response: {
        200: ref(PolicyReloadSchema),
        400: ref(IcebergErrorResponseSchema, { description: 'The policy file is invalid; the previous policy stays in force.' }),
        401: ref(IcebergErrorResponseSchema, { description: 'No admin token was sent, or it does not verify (wrong, expired, another issuer or audience).' }),
        403: ref(IcebergErrorResponseSchema, { description: 'The token does not grant write access, or no admin authentication is configured on the server.' })
      }
    }
  }, async (request) => {
    const result = scope.options.policy.reload()
    if (!result.ok) {
      request.log.warn({ error: result.error }, 'policy reload failed')
      throw new GateError(ERRORS.VALIDATION, `Cannot reload policy: ${result.error}`, { details: result.issues.map(formatIssue) })
    }
    request.log.info({ policy: result.policy.source, changed: result.changed }, 'policy reloaded')
    return { reloaded: true as const, policy: result.policy.source, scopes: result.policy.scopes.length }
  })
}
