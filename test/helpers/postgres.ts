/**
 * A throwaway PostgreSQL cluster for a test file: initdb in a temp folder, the server on a free
 * loopback port, removed at teardown. Debian's `postgresql` package puts the programs under
 * /usr/lib/postgresql/<major>/bin; PATH is searched too. Missing programs skip the checks that
 * need them on a developer machine and fail them under CI (see system-tool.ts).
 */
import { spawn, execFile, execFileSync, type ChildProcess } from 'node:child_process'
import { accessSync, chownSync, constants, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import type { Test } from 'tap'
import { findOnPath, inCi } from './system-tool.js'

const INSTALL = 'apt-get install postgresql'

function findBin (): string | undefined {
  const onPath = findOnPath(['initdb'])
  if (onPath !== undefined) return join(onPath, '..')
  try {
    for (const major of readdirSync('/usr/lib/postgresql').sort().reverse()) {
      const bin = join('/usr/lib/postgresql', major, 'bin')
      try {
        accessSync(join(bin, 'initdb'), constants.X_OK)
        accessSync(join(bin, 'postgres'), constants.X_OK)
        return bin
      } catch {}
    }
  } catch {}
  return undefined
}

const bin = findBin()

/** For `t.test(name, { skip: postgresSkip }, …)`: why the PostgreSQL checks do not run, or false. */
export const postgresSkip: string | false = bin === undefined && !inCi()
  ? `PostgreSQL is not installed (${INSTALL}); these checks run when it is, and are required when CI is set`
  : false

export interface TestPostgres {
  /** postgres://… of a fresh, empty database. */
  readonly url: string
  /** A new empty database on the same server (for a test that wants its own). */
  createDatabase (name: string): Promise<string>
  /** `pg_ctl restart -m <mode>`: the server drops every connection and comes back on the same port. */
  restart (mode: 'fast' | 'immediate'): Promise<void>
  /** `pg_ctl stop -m <mode>`: the server is gone until `start()`. */
  stop (mode: 'fast' | 'immediate'): Promise<void>
  start (): Promise<void>
}

async function freePort (): Promise<number> {
  return await new Promise((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port
      s.close(() => resolve(port))
    })
  })
}

/** initdb refuses to run as root: the cluster then belongs to the `postgres` system user. */
function runAs (): { uid: number, gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined
  const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim())
  const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim())
  return { uid, gid }
}

/**
 * Starts a cluster for this test (stopped at its teardown). Returns undefined after failing the
 * test when PostgreSQL is required (CI) but missing.
 */
export async function startPostgres (t: Test): Promise<TestPostgres | undefined> {
  if (bin === undefined) {
    t.fail(`PostgreSQL is required when CI is set: ${INSTALL}`)
    return undefined
  }
  const dir = mkdtempSync(join(tmpdir(), 'iceguard-pg-'))
  const user = runAs()
  if (user !== undefined) chownSync(dir, user.uid, user.gid)
  const data = join(dir, 'data')
  execFileSync(join(bin, 'initdb'), ['-D', data, '-U', 'iceguard', '--auth=trust', '-E', 'UTF8', '--no-sync'], {
    stdio: 'ignore', ...(user ?? {})
  })
  const port = await freePort()
  const serverArgs = ['-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off', '-c', 'full_page_writes=off']
  const server: ChildProcess = spawn(join(bin, 'postgres'), ['-D', data, ...serverArgs], { stdio: 'ignore', ...(user ?? {}) })
  let exited = false
  server.once('exit', () => { exited = true })
  // After a restart through pg_ctl the server is pg_ctl's child, not ours: pg_ctl stops it.
  let restarted = false
  const pgCtl = async (args: string[]): Promise<void> => {
    restarted = true
    await new Promise<void>((resolve, reject) => {
      execFile(join(bin, 'pg_ctl'), ['-D', data, '-l', join(dir, 'server.log'), '-w', '-t', '60', ...args], { ...(user ?? {}) }, (err) => {
        if (err === null) resolve()
        else reject(err)
      })
    })
  }
  t.teardown(async () => {
    if (restarted) await pgCtl(['stop', '-m', 'immediate']).catch(() => {})
    if (!exited) {
      const gone = new Promise(resolve => server.once('exit', resolve))
      server.kill('SIGINT')
      await gone
    }
    rmSync(dir, { recursive: true, force: true })
  })
  const admin = `postgres://iceguard@127.0.0.1:${port}/postgres`
  // Wait for the server to accept connections (start-up takes a moment; no deadline is asserted).
  for (;;) {
    if (exited) throw new Error('PostgreSQL exited during start-up')
    const client = new pg.Client({ connectionString: admin })
    try {
      await client.connect()
      await client.end()
      break
    } catch {
      await client.end().catch(() => {})
      await new Promise(resolve => setTimeout(resolve, 100))
    }
  }
  const createDatabase = async (name: string): Promise<string> => {
    const client = new pg.Client({ connectionString: admin })
    await client.connect()
    try {
      await client.query(`CREATE DATABASE "${name}"`)
    } finally {
      await client.end()
    }
    return `postgres://iceguard@127.0.0.1:${port}/${name}`
  }
  return {
    url: await createDatabase('iceguard_test'),
    createDatabase,
    restart: async (mode) => { await pgCtl(['restart', '-m', mode]) },
    stop: async (mode) => { await pgCtl(['stop', '-m', mode]) },
    start: async () => { await pgCtl(['start', '-o', serverArgs.join(' ')]) }
  }
}
