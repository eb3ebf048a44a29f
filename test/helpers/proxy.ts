/**
 * `startProxy(t, opts)`: iceguard built from a Config, listening on 127.0.0.1:0, closed on teardown.
 */
import type { FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import { buildApp, type AppOptions } from '../../src/app.js'
import { configFrom, type Config } from '../../src/config.js'

/** Command-line flags by name (`upstream`, `policy`, `body-limit`, …), plus two extras. */
export interface ProxyOptions {
  /** Environment-only settings (ICEGUARD_ADMIN_TOKEN, ICEGUARD_ASSERTIONS). */
  readonly env?: NodeJS.ProcessEnv
  readonly app?: AppOptions
  readonly [flag: string]: string | boolean | NodeJS.ProcessEnv | AppOptions | undefined
}

export interface RunningProxy {
  readonly url: string
  readonly app: FastifyInstance
  readonly config: Config
  close (): Promise<void>
}

export async function startProxy (t: Test, opts: ProxyOptions): Promise<RunningProxy> {
  const { env, app: appOptions, ...rest } = opts
  const fields: Record<string, string | boolean> = {}
  for (const [name, value] of Object.entries(rest)) {
    if (typeof value === 'string' || typeof value === 'boolean') fields[name] = value
  }
  const config = configFrom({ 'log-level': 'silent', ...fields, port: '0', host: '127.0.0.1' }, env)
  const app = await buildApp(config, appOptions)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const address = app.server.address()
  const port = typeof address === 'object' && address !== null ? address.port : 0
  let closed = false
  const close = async (): Promise<void> => {
    if (closed) return
    closed = true
    await app.close()
  }
  t.teardown(close)
  return { url: `http://127.0.0.1:${port}`, app, config, close }
}
