/**
 * Process entry: configuration → (embedded catalog when no upstream is set) → app → listen,
 * with a graceful close on SIGINT/SIGTERM.
 */
import { dirname, join } from 'node:path'
import { pathToFileURL } from 'node:url'
import closeWithGrace from 'close-with-grace'
import type { FastifyInstance } from 'fastify'
import { buildApp } from './app.js'
import { DEFAULT_WAREHOUSE, startEmbeddedCatalog } from '../dev-catalog/index.js'
import { ConfigError, loadConfig, usage, wantsHelp, withUpstreamUrl, type Config } from './config.js'
import { PolicyError } from '../policy/policy-error.js'
import { handleProcessErrors } from './process-errors.js'
import { startTracing, TracingConfigError, type Tracing } from '../telemetry/start-tracing.js'

export interface Running {
  readonly app: FastifyInstance
  readonly config: Config
  /** The address iceguard listens on. */
  readonly url: string
}

/**
 * Starts iceguard as `npm start` does. Returns undefined (and sets `process.exitCode`) for
 * `--help` or a bad configuration.
 */
export async function main (argv: readonly string[] = process.argv.slice(2), env: NodeJS.ProcessEnv = process.env,
  options: { handleSignals?: boolean } = {}): Promise<Running | undefined> {
  if (wantsHelp(argv)) {
    process.stdout.write(`${usage()}\n`)
    return undefined
  }
  let config: Config
  try {
    config = loadConfig(argv, env)
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err
    process.stderr.write(`iceguard: ${err.message}\n`)
    process.exitCode = 2
    return undefined
  }

  // Decisions survive a restart: their SQLite file sits next to the warehouse unless told otherwise
  // (in memory mode they are kept in memory too).
  if (config.stateDir === undefined && config.databaseUrl === undefined && !config.memory) {
    config = { ...config, stateDir: join(dirname(config.warehouse ?? DEFAULT_WAREHOUSE), 'iceguard-state') }
  }

  // Traces only when the standard OTEL_* variables ask for them (src/telemetry/start-tracing.ts).
  let tracing: Tracing | undefined
  // The app's logger, once built: export failures are logged there.
  const logTo: { app?: FastifyInstance } = {}
  try {
    tracing = await startTracing(env, { onError: (message) => logTo.app?.log.warn({ traces: message }, 'Cannot export spans: the collector failed; spans are dropped, requests go on') })
  } catch (err) {
    if (!(err instanceof TracingConfigError)) throw err
    process.stderr.write(`iceguard: ${err.message}\n`)
    process.exitCode = 2
    return undefined
  }

  let embedded: Awaited<ReturnType<typeof startEmbeddedCatalog>> | undefined
  if (config.upstreamUrl === undefined) {
    embedded = await startEmbeddedCatalog({
      host: '127.0.0.1',
      port: 0,
      ...(config.memory ? { memory: true } : {}),
      ...(config.warehouse === undefined ? {} : { warehouse: config.warehouse })
    })
    config = withUpstreamUrl(config, embedded.url)
  }

  let app: FastifyInstance
  try {
    app = await buildApp(config)
  } catch (err) {
    // A bad policy never starts the server: every problem is printed with its line and column.
    if (!(err instanceof PolicyError)) throw err
    await embedded?.close()
    await tracing?.shutdown()
    process.stderr.write(`iceguard: ${err.message}\n`)
    process.exitCode = 2
    return undefined
  }
  logTo.app = app
  if (tracing !== undefined) {
    const traces = tracing
    // Last: the spans of requests that finish while closing are sent too.
    app.addHook('onClose', async () => { await traces.shutdown() })
    app.log.info({ traces: traces.describe }, `tracing on: spans sent over OTLP ${traces.describe}`)
  }
  if (embedded !== undefined) {
    const catalog = embedded
    app.addHook('onClose', async () => { await catalog.close() })
    app.log.info({ upstream: catalog.url, warehouse: catalog.warehouse ?? 'in memory' },
      `no upstream configured: serving the embedded development catalog (data: ${catalog.warehouse ?? 'in memory, lost on exit'})`)
  }
  let address: string
  try {
    address = await app.listen({ port: config.port, host: config.host })
  } catch (err) {
    // A port taken or not ours to bind is the operator's to fix: one line that says so, no stack.
    const code = (err as { code?: unknown }).code
    if (code !== 'EADDRINUSE' && code !== 'EACCES' && code !== 'EADDRNOTAVAIL') throw err
    await app.close()
    const why = code === 'EADDRINUSE' ? 'the port is already in use' : code === 'EACCES' ? 'permission denied' : 'the address is not available on this machine'
    process.stderr.write(`iceguard: Cannot listen on ${config.host}:${config.port}: ${why} (${code}); choose another with --port/ICEGUARD_PORT or --host/ICEGUARD_HOST\n`)
    process.exitCode = 2
    return undefined
  }
  // The upstream URL carries no credentials (the configuration refuses user, password and query).
  app.log.info({ address, upstream: config.upstreamUrl, embedded: embedded !== undefined, policy: app.policyStore.source },
    `iceguard serving on ${address}: upstream ${config.upstreamUrl ?? ''}${embedded !== undefined ? ' (embedded development catalog)' : ''}, policy ${app.policyStore.source}`)

  if (options.handleSignals !== false) {
    // SIGHUP reloads the policy, as daemons conventionally do; a bad file keeps the old policy.
    process.on('SIGHUP', () => {
      const result = app.policyStore.reload()
      if (result.ok) app.log.info({ policy: app.policyStore.source }, 'policy reloaded on SIGHUP')
      else app.log.error({ policy: app.policyStore.source, issues: result.issues }, result.error)
    })
    // Errors are the process-wide handler's (process-errors.ts): most are logged and survived.
    closeWithGrace({ delay: config.shutdownTimeout, skip: ['SIGHUP', 'uncaughtException', 'unhandledRejection'] }, async ({ signal }) => {
      if (signal !== undefined) {
        app.log.info({ signal, shutdownTimeoutMs: config.shutdownTimeout },
          `${signal} received: closing; requests in flight finish (up to ${config.shutdownTimeout} ms), new ones are refused`)
      }
      await app.close()
      app.log.info('closed')
    })
    handleProcessErrors(app.log, () => {
      const late = setTimeout(() => process.exit(1), config.shutdownTimeout)
      late.unref()
      app.close().then(() => { app.log.info('closed') }, () => {}).finally(() => process.exit(1))
    })
  }
  return { app, config, url: address }
}

const entry = process.argv[1]
if (entry !== undefined && import.meta.url === pathToFileURL(entry).href) {
  main().catch((err: unknown) => {
    process.stderr.write(`iceguard: failed to start: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`)
    process.exit(1)
  })
}
