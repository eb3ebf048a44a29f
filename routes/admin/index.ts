/**
 * The admin API under `/admin/v1` (register with that prefix): dry-run validation, schema diff and
 * history, contracts, the rule catalogue and the effective policy. JSON in and out; every shape is
 * a TypeBox schema in `src/schemas` that drives validation, types and the OpenAPI document.
 *
 * Table reads go to the upstream with the caller's catalog credential (never the admin credential:
 * admin-auth-hook.ts), so the admin API shows no one more than the catalog would; the upstream's
 * 401/403/404 are relayed as they came.
 */
import type { FastifyInstance, FastifyReply } from 'fastify'
import { ERRORS, GateError } from '../../src/errors.js'
import { overrideVerifier } from '../../src/gate/override.js'
import { metrics as processMetrics } from '../../src/metrics/iceguard-metrics.js'
import { sendGateError, toGateError } from '../../src/plugins/error-handler.js'
import { addSharedSchemas } from '../../src/schemas/index.js'
import { createAdminAuth } from '../../src/auth/admin-auth.js'
import { createTableReader, RelayedAnswer, type AdminRoutesOptions, type AdminScope } from './admin-context.js'
import { adminAuthHook } from './admin-auth-hook.js'
import { withRevocation } from '../../src/decisions/revocations.js'
import { parseAdminJson } from './json-body.js'
import { validationMessage } from './validation-message.js'
import { adminValidatorCompiler } from './validator.js'
import compatibilityRoute from './compatibility.js'
import contractRoute from './contract.js'
import decisionRoutes from './decisions.js'
import diffRoute from './diff.js'
import overrideRoutes from './overrides.js'
import policyRoutes from './policy.js'
import rulesRoute from './rules.js'
import schemaChangesRoutes from './schema-changes.js'
import schemaHistoryRoute from './schema-history.js'
import validateRoute from './validate.js'
import viewIndexRoutes from './views.js'

async function adminRoutes (app: FastifyInstance, options: AdminRoutesOptions): Promise<void> {
  addSharedSchemas(app)
  // Dry runs and schema changes refuse a revoked token exactly as the gate does.
  const verifier = overrideVerifier(options.overrideSecret)
  const verifyOverride = verifier === undefined || options.decisions === undefined ? verifier : withRevocation(verifier, options.decisions.revocations)
  const scope: AdminScope = {
    options: { ...options, metrics: options.metrics ?? processMetrics },
    tables: createTableReader(options.client, options.readBase),
    ...(verifyOverride !== undefined && { verifyOverride })
  }

  app.decorateRequest('adminIdentity', undefined)
  app.decorateRequest('withheldHeaders', undefined)
  app.addHook('onRequest', adminAuthHook(options.auth ?? createAdminAuth({})))

  app.decorateRequest('losslessBody', undefined)
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, raw, done) => {
    try {
      const { lossless, plain } = parseAdminJson(raw as Buffer)
      request.losslessBody = lossless
      done(null, plain)
    } catch (err) {
      done(err as Error, undefined)
    }
  })

  app.setValidatorCompiler(adminValidatorCompiler())
  app.setSchemaErrorFormatter((errors, dataVar) => new Error(validationMessage(errors, dataVar)))
  app.setErrorHandler((err, request, reply: FastifyReply) => {
    if (err instanceof RelayedAnswer) {
      for (const [k, v] of Object.entries(err.headers)) if (v !== undefined && (k === 'content-type' || k === 'www-authenticate')) reply.header(k, v)
      return reply.code(err.statusCode).send(err.body)
    }
    const validation = (err as { validation?: unknown }).validation !== undefined
    const gate = validation
      ? new GateError(ERRORS.BAD_REQUEST, `Invalid request: ${(err as Error).message}`)
      : toGateError(err, app.initialConfig.bodyLimit ?? 1024 * 1024)
    if (gate.statusCode >= 500) request.log.error({ err }, 'admin request failed')
    return sendGateError(reply, gate)
  })

  await app.register(validateRoute, { scope })
  await app.register(diffRoute, { scope })
  await app.register(schemaHistoryRoute, { scope })
  await app.register(contractRoute, { scope })
  await app.register(rulesRoute, { scope })
  await app.register(policyRoutes, { scope })
  await app.register(schemaChangesRoutes, { scope })
  await app.register(decisionRoutes, { scope })
  await app.register(overrideRoutes, { scope })
  await app.register(compatibilityRoute, { scope })
  await app.register(viewIndexRoutes, { scope })
}

export default adminRoutes
