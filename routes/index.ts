/**
 * Registers the HTTP edge in a fixed order (explicit, no autoload).
 */
import type { FastifyInstance } from 'fastify'
import adminRoutes from './admin/index.js'
import iceberg from './iceberg/index.js'
import ops from './ops.js'
import rulesPage from './rules-page.js'

export default async function routes (app: FastifyInstance): Promise<void> {
  await app.register(ops, { client: app.upstream.client, upstreamUrl: app.config.upstreamUrl })
  await app.register(adminRoutes, {
    prefix: '/admin/v1',
    client: app.upstream.client,
    // Through the gate's ETag cache: a read followed by a commit parses the metadata once.
    readBase: app.gate.readBase,
    policy: app.policyStore,
    adminToken: app.config.adminToken,
    ...(app.config.overrideSecret === undefined ? {} : { overrideSecret: app.config.overrideSecret })
  })
  await app.register(rulesPage)
  await app.register(iceberg)
}
