/**
 * Registers the HTTP edge in a fixed order (explicit, no autoload).
 */
import type { FastifyInstance } from 'fastify'
import { adminAuthFromConfig } from '../src/auth/from-config.js'
import adminRoutes from './admin/index.js'
import iceberg from './iceberg/index.js'
import ops from './ops.js'

export default async function routes (app: FastifyInstance): Promise<void> {
  // One authenticator for the admin API and the console: one key-set cache, one answer per token.
  const auth = adminAuthFromConfig(app.config)
  await app.register(ops, { client: app.upstream.client, upstreamUrl: app.config.upstreamUrl })
  await app.register(adminRoutes, {
    prefix: '/admin/v1',
    client: app.upstream.client,
    // Through the gate's ETag cache: a read followed by a commit parses the metadata once.
    readBase: app.gate.readBase,
    policy: app.policyStore,
    auth,
    ...(app.config.overrideSecret === undefined ? {} : { overrideSecret: app.config.overrideSecret })
  })
  await app.register(iceberg)
}
