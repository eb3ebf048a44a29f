/**
 * Makes the configuration and the upstream connection available to routes
 * (`app.config`, `app.upstream`) and closes the pool with the app.
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { Config } from '../main/config.js'
import type { Upstream } from '../upstream/index.js'

declare module 'fastify' {
  interface FastifyInstance {
    config: Config
    upstream: Upstream
  }
}

async function upstreamPlugin (app: FastifyInstance, opts: { config: Config, upstream: Upstream }): Promise<void> {
  app.decorate('config', opts.config)
  app.decorate('upstream', opts.upstream)
  app.addHook('onClose', async () => {
    await opts.upstream.close()
  })
}

export default fp(upstreamPlugin, { name: 'iceguard-upstream', fastify: '5.x' })
