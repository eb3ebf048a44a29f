/**
 * Break-glass override tokens as records: `GET /admin/v1/overrides` lists them, `POST` mints one
 * (admin token; the server holds the HMAC secret and stores who minted it, never the token), and
 * `DELETE /admin/v1/overrides/{id}` revokes one; the gate then refuses it on every replica that
 * shares the store (src/decisions/revocations.ts).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { principalFromHeaders } from '../../src/audit/principal.js'
import { adminPrincipal } from '../../src/auth/access.js'
import { ERRORS, GateError } from '../../src/errors.js'
import { MAX_OVERRIDE_TTL_SECONDS, mintOverride, parseTtl, verifyOverride } from '../../src/policy/override-token.js'
import { MintOverrideRequestSchema, MintOverrideResponseSchema, OverrideListSchema, OverrideSchema, overrideToWire } from '../../src/schemas/decisions.js'
import { IcebergErrorResponseSchema } from '../../src/schemas/error-model.js'
import { ref } from '../../src/schemas/ref.js'
import type { AdminScope } from './admin-context.js'
import { storeCall, STORE_ERRORS } from './store-call.js'

const error = (description: string) => ref(IcebergErrorResponseSchema, { description })
const ADMIN_ERRORS = {
  401: error('No admin token was sent.'),
  403: error('The admin token is wrong, or none is configured on the server.')
}

export default async function overrideRoutes (app: FastifyInstance, { scope }: { scope: AdminScope }): Promise<void> {
  const decisions = scope.options.decisions
  if (decisions === undefined) return
  const typed = app.withTypeProvider<TypeBoxTypeProvider>()

  typed.get('/overrides', {
    schema: {
      operationId: 'listOverrides',
      tags: ['admin'],
      summary: 'Override tokens: minted here, seen at the gate, or revoked',
      querystring: Type.Object({
        active: Type.Optional(Type.Boolean({ description: 'Only tokens neither expired nor revoked.' }))
      }, { additionalProperties: false }),
      response: { 200: ref(OverrideListSchema), ...STORE_ERRORS }
    }
  }, async (request) => {
    const list = await storeCall(async () => await decisions.store.listOverrides(request.query.active === true ? { activeAt: Date.now() } : {}), 'list overrides')
    return { overrides: list.map(overrideToWire) }
  })

  typed.post('/overrides', {
    schema: {
      operationId: 'mintOverride',
      tags: ['admin'],
      summary: 'Mint a break-glass override token',
      description: 'Needs `Authorization: Bearer <ICEGUARD_ADMIN_TOKEN>` and an override secret on the server. The token is returned once; its id, table, rules, reason, expiry and minter are stored.',
      body: ref(MintOverrideRequestSchema),
      response: {
        201: ref(MintOverrideResponseSchema),
        400: error('Bad input: the message names the field.'),
        ...ADMIN_ERRORS,
        ...STORE_ERRORS
      }
    }
  }, async (request, reply) => {
    const secret = scope.options.overrideSecret
    if (secret === undefined || secret === '') {
      throw new GateError(ERRORS.FORBIDDEN, 'Cannot mint an override: overrides are not enabled on this server (set ICEGUARD_OVERRIDE_SECRET)')
    }
    const body = request.body
    let token: string
    try {
      token = mintOverride({ table: body.table, rules: body.rules, ttlSeconds: parseTtl(body.ttl), reason: body.reason, secret })
    } catch (err) {
      throw new GateError(ERRORS.BAD_REQUEST, (err as Error).message)
    }
    const verified = verifyOverride(token, { table: body.table, secret })
    if (!verified.ok) throw new GateError(ERRORS.INTERNAL, `Cannot mint an override: ${verified.error}`)
    const record = {
      id: verified.id,
      table: verified.table,
      rules: verified.rules,
      reason: verified.reason,
      ...(principalOf(request) !== undefined ? { mintedBy: principalOf(request) } : {}),
      issuedAt: verified.issuedAt.getTime(),
      expiresAt: verified.expiresAt.getTime(),
      source: 'minted' as const
    }
    await storeCall(async () => { await decisions.store.recordOverride(record) }, 'record the override')
    request.log.info({ override: record.id, table: record.table, rules: record.rules, mintedBy: record.mintedBy }, 'override minted')
    return await reply.code(201).send({ token, override: overrideToWire(record) })
  })

  typed.delete('/overrides/:id', {
    schema: {
      operationId: 'revokeOverride',
      tags: ['admin'],
      summary: 'Revoke an override token',
      description: 'The gate refuses the token from then on, on every replica sharing the store within seconds. ' +
        'A token not seen yet (minted offline) can be revoked ahead of its first use.',
      params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9_-]+$' }) }),
      response: { 200: ref(OverrideSchema), 400: error('Bad input: the message names the field.'), ...ADMIN_ERRORS, ...STORE_ERRORS }
    }
  }, async (request) => {
    const now = Date.now()
    const revoked = await storeCall(async () => await decisions.store.revokeOverride(request.params.id, principalOf(request), now,
      now + MAX_OVERRIDE_TTL_SECONDS * 1000), 'revoke the override')
    decisions.revocations.add(revoked.id)
    request.log.info({ override: revoked.id, revokedBy: revoked.revokedBy }, 'override revoked')
    return overrideToWire(revoked)
  })
}

/**
 * Who minted or revoked: the verified admin caller when admin authentication is configured (its
 * credential is taken out of the request once checked), else whoever the headers name.
 */
function principalOf (request: FastifyRequest): string | undefined {
  const identity = request.adminIdentity
  if (identity === undefined) return principalFromHeaders(request.headers)
  return adminPrincipal(identity)
}
