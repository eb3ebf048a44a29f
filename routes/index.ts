/**
 * Registers the HTTP edge in a fixed order (explicit, no autoload).
 */
import type { FastifyInstance } from 'fastify'
import { adminAuthFromConfig } from '../src/auth/from-config.js'
import type { DecisionSource } from '../src/console/decision-source.js'
import type { OverrideSource } from '../src/console/override-source.js'
import { createTableReader } from './admin/admin-context.js'
import adminRoutes from './admin/index.js'
import { adminApiDecisionSource } from './console/admin-api-decisions.js'
import consoleRoutes from './console/index.js'
import { storedOverrideSource } from './console/stored-overrides.js'
import iceberg from './iceberg/index.js'
import ops from './ops.js'
import rulesPage from './rules-page.js'

export interface RoutesOptions {
  /** Where the console reads decisions; default: iceguard's own `GET /admin/v1/decisions`. */
  readonly decisions?: DecisionSource
  /** Where the console reads the overrides in force; default: the decision store's override records. */
  readonly overrides?: OverrideSource
}

export default async function routes (app: FastifyInstance, options: RoutesOptions = {}): Promise<void> {
  // One authenticator for the admin API and the console: one key-set cache, one answer per token.
  const auth = adminAuthFromConfig(app.config, (detail) => { app.log.warn({ component: 'admin-auth' }, `admin JWTs cannot be checked: ${detail}`) })
  await app.register(ops, { client: app.upstream.client, upstreamUrl: app.config.upstreamUrl })
  await app.register(adminRoutes, {
    prefix: '/admin/v1',
    client: app.upstream.client,
    // Through the gate's ETag cache: a read followed by a commit parses the metadata once.
    readBase: app.gate.readBase,
    policy: app.policyStore,
    auth,
    decisions: app.decisions,
    views: app.viewIndex,
    ...(app.config.overrideSecret === undefined ? {} : { overrideSecret: app.config.overrideSecret })
  })
  await app.register(consoleRoutes, {
    auth,
    tables: createTableReader(app.upstream.client, app.gate.readBase),
    policy: app.policyStore,
    views: app.viewIndex,
    decisions: options.decisions ?? adminApiDecisionSource(app),
    overrides: options.overrides ?? storedOverrideSource(app.decisions.store),
    secureCookie: app.config.publicUrl?.startsWith('https:') ?? false,
    jwt: app.config.adminJwt !== undefined
  })
  await app.register(rulesPage)
  await app.register(iceberg)
}
