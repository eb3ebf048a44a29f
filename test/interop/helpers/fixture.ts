/**
 * The Iceberg REST fixture (org.apache.iceberg.rest.RESTCatalogServer, Iceberg's reference REST
 * catalog) as a child process for one test: a JDBC catalog in a SQLite file and a warehouse folder,
 * both in a fresh temp folder, on a free loopback port; ready when `GET /v1/config` answers 200.
 *
 * The server is configured by environment only: each `CATALOG_*` variable becomes a catalog
 * property (RESTCatalogServer: prefix dropped, `__` → `-`, `_` → `.`, lower-cased). The default
 * `jdbc:sqlite::memory:` keeps two pooled connections that do not share one database, so tables
 * vanish under concurrent calls: a file it is, in WAL mode against SQLITE_BUSY.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fixtureClasspath } from './toolchain.js'

export interface RunningFixture {
  /** http://127.0.0.1:<port> — the catalog's root (it serves /v1/... there). */
  readonly url: string
  /** file:///… the catalog's warehouse. */
  readonly warehouse: string
  /** Everything the server wrote to stdout and stderr so far (for a failing test's message). */
  log (): string
  stop (): Promise<void>
  /** Ends the server at once (for a process's 'exit' handler, where nothing can be awaited). */
  kill (): void
}

async function freePort (): Promise<number> {
  return await new Promise((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number }
      s.close(() => resolve(port))
    })
  })
}

async function ready (url: string, child: ChildProcess, deadline: number): Promise<void> {
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the fixture exited (${child.exitCode ?? child.signalCode})`)
    try {
      const res = await fetch(`${url}/v1/config`)
      await res.arrayBuffer()
      if (res.status === 200) return
    } catch {}
    await new Promise(resolve => setTimeout(resolve, 200))
  }
  throw new Error('the fixture did not answer GET /v1/config in time')
}

export interface FixtureOptions {
  /** Extra catalog properties, as CATALOG_* variables (e.g. { CATALOG_CLIENTS: '4' }). */
  readonly env?: Record<string, string>
  /** ms to wait for the first 200 on /v1/config (a cold JVM on a busy 2-core machine). */
  readonly startTimeout?: number
  /** Keep the catalog file and the warehouse in this folder, across runs (default: a temp folder, removed at stop). */
  readonly dir?: string
  /** The port to listen on (default: a free one). */
  readonly port?: number
}

export async function startFixture (options: FixtureOptions = {}): Promise<RunningFixture> {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'iceberg-fixture-'))
  const keep = options.dir !== undefined
  mkdirSync(dir, { recursive: true })
  const warehouse = `file://${join(dir, 'warehouse')}`
  let output = ''
  for (let attempt = 0; ; attempt++) {
    const port = options.port ?? await freePort()
    const url = `http://127.0.0.1:${port}`
    const child = spawn('java', ['-Xshare:auto', '-XX:TieredStopAtLevel=1', '-cp', fixtureClasspath, 'org.apache.iceberg.rest.RESTCatalogServer'], {
      env: {
        ...process.env,
        ...options.env,
        CATALOG_REST_PORT: String(port),
        CATALOG_WAREHOUSE: warehouse,
        CATALOG_URI: `jdbc:sqlite:${join(dir, 'catalog.db')}?journal_mode=WAL`
      },
      stdio: ['ignore', 'pipe', 'pipe']
    })
    child.stdout.on('data', (b: Buffer) => { output += b.toString() })
    child.stderr.on('data', (b: Buffer) => { output += b.toString() })
    child.on('error', () => {})
    try {
      await ready(url, child, Date.now() + (options.startTimeout ?? 60_000))
    } catch (err) {
      child.kill('SIGKILL')
      // Another process may have taken the port between freePort() and the JVM's bind.
      if (options.port === undefined && attempt < 2 && /BindException|Address already in use/.test(output)) continue
      if (!keep) rmSync(dir, { recursive: true, force: true })
      throw new Error(`${(err as Error).message}\n${output}`)
    }
    return {
      url,
      warehouse,
      log: () => output,
      kill: () => { child.kill('SIGKILL') },
      async stop () {
        if (child.exitCode === null && child.signalCode === null) {
          const exited = new Promise(resolve => child.once('exit', resolve))
          child.kill('SIGTERM')
          const timer = setTimeout(() => child.kill('SIGKILL'), 5000)
          await exited
          clearTimeout(timer)
        }
        if (!keep) rmSync(dir, { recursive: true, force: true })
      }
    }
  }
}
