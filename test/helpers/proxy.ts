/**
 * `startProxy(t, opts)`: iceguard built from a Config, listening on 127.0.0.1:0, closed on teardown,
 * on the transport `t` belongs to (transports.ts) unless `fast-lane` is given.
 */
import type { FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import { buildApp, type AppOptions } from '../../src/main/app.js'
import { configFrom, type Config } from '../../src/main/config.js'
import { startConfigFirstRelay, transportOf } from './transports.js'

/** Command-line flags by name (`upstream`, `policy`, `body-limit`, …), plus two extras. */
export interface ProxyOptions {
  /** Environment-only settings (ICEGUARD_ADMIN_TOKEN, ICEGUARD_ASSERTIONS). */
  readonly env?: NodeJS.ProcessEnv
  readonly app?: AppOptions
  readonly [flag: string]: string | boolean | NodeJS.ProcessEnv | AppOptions | undefined
}

export interface RunningProxy {
  /** Where clients connect: iceguard, or on the `config first` transport the relay in front of it. */
  readonly url: string
  /** iceguard's own listening address. */
  readonly direct: string
  readonly app: FastifyInstance
  readonly config: Config
  close (): Promise<void>
}

export async function startProxy (t: Test, opts: ProxyOptions): Promise<RunningProxy> {
  const { env, app: appOptions, ...rest } = opts
  const transport = transportOf(t)
  const fields: Record<string, string | boolean> = {}
  for (const [name, value] of Object.entries(rest)) {
    if (typeof value === 'string' || typeof value === 'boolean') fields[name] = value
  }
  // No crawl of the catalog's views unless a test asks for one: most tests assert exactly what reached the upstream.
  const config = configFrom({ 'log-level': 'silent', 'fast-lane': transport === 'node:http' ? 'off' : 'on', 'view-index-interval': '0', ...fields, port: '0', host: '127.0.0.1' }, env)
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
  const direct = `http://127.0.0.1:${port}`
  const url = transport === 'config first' && config.fastLane ? await startConfigFirstRelay(t, direct) : direct
  return { url, direct, app, config, close }
}
