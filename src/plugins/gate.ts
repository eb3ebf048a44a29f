/**
 * Makes the gate available to the write routes (`app.gate`): built once at start-up over the
 * buffered upstream client, the policy in force and the audit sink (pino, `component: "audit"`).
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { AuditSink } from '../audit/audit-log.js'
import { pinoAuditSink } from '../audit/audit-log.js'
import type { Config } from '../main/config.js'
import { createGateService, type GateService } from '../gate/gate-service.js'
import { registrationCheck } from '../gate/registration.js'
import type { TableRef } from '../iceberg/rest-path.js'
import type { OverrideVerifier } from '../gate/override.js'
import type { ViewIndexPort } from '../gate/gate-types.js'
import type { RuleSettings } from '../engine/rules/rule.js'
import { ruleById } from '../engine/rules/index.js'

declare module 'fastify' {
  interface FastifyInstance {
    gate: GateService
  }
}

interface GatePluginOptions {
  readonly config: Config
  /** The policy in force; default: the app's policy store (`app.policyStore`). */
  readonly policy?: { resolve (table: TableRef): RuleSettings }
  /** Where decisions are recorded; default: the app's pino logger. */
  readonly audit?: AuditSink
  /** Break-glass HMAC secret; default: the configuration's. */
  readonly overrideSecret?: string
  /** The view index the gate reads dependents from and keeps current. */
  readonly views?: ViewIndexPort
  /** Wraps the override token check (revocation). */
  readonly overrideCheck?: (verify: OverrideVerifier) => OverrideVerifier
}

async function gatePlugin (app: FastifyInstance, opts: GatePluginOptions): Promise<void> {
  const policy = opts.policy ?? app.policyStore
  const settingsFor = (table: TableRef): RuleSettings => policy.resolve({ namespace: table.namespace, name: table.name })
  const gate = createGateService({
    client: app.upstream.client,
    settingsFor,
    audit: opts.audit ?? pinoAuditSink(app.log),
    config: { assertions: opts.config.assertions, retryAfter: opts.config.retryAfter, ...(opts.config.publicUrl !== undefined && { publicUrl: opts.config.publicUrl }) },
    overrideSecret: opts.overrideSecret ?? opts.config.overrideSecret,
    ...(opts.overrideCheck !== undefined ? { overrideCheck: opts.overrideCheck } : {}),
    ...(opts.views !== undefined ? { views: opts.views } : {}),
    registration: registrationCheck(settingsFor, id => ruleById(id) !== undefined),
    onError: (err) => app.log.error({ err }, 'gate failed')
  })
  app.decorate('gate', gate)
}

export default fp(gatePlugin, { name: 'iceguard-gate', fastify: '5.x', dependencies: ['iceguard-upstream'] })
