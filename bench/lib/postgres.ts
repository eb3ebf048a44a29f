/**
 * A throwaway PostgreSQL cluster for a bench run, controlled with `pg_ctl` so it can be restarted
 * under load. Found on PATH or under Debian's /usr/lib/postgresql/<major>/bin; undefined when not
 * installed. As root the cluster belongs to the `postgres` system user (initdb refuses root).
 */
import { execFile, execFileSync } from 'node:child_process'
import { accessSync, chownSync, constants, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { freePort } from './processes.js'

export interface BenchPostgres {
  readonly url: string
  restart (mode: 'fast' | 'immediate'): Promise<void>
  close (): Promise<void>
}

function findBin (): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(path.delimiter)]
  try {
    for (const major of readdirSync('/usr/lib/postgresql').sort().reverse()) dirs.push(path.join('/usr/lib/postgresql', major, 'bin'))
  } catch {}
  for (const dir of dirs) {
    try {
      accessSync(path.join(dir, 'initdb'), constants.X_OK)
      accessSync(path.join(dir, 'pg_ctl'), constants.X_OK)
      return dir
    } catch {}
  }
  return undefined
}

export async function startBenchPostgres (): Promise<BenchPostgres | undefined> {
  const bin = findBin()
  if (bin === undefined) return undefined
  const dir = mkdtempSync(path.join(os.tmpdir(), 'iceguard-soak-pg-'))
  const user = process.getuid?.() === 0
    ? { uid: Number(execFileSync('id', ['-u', 'postgres']).toString()), gid: Number(execFileSync('id', ['-g', 'postgres']).toString()) }
    : undefined
  if (user !== undefined) chownSync(dir, user.uid, user.gid)
  const data = path.join(dir, 'data')
  execFileSync(path.join(bin, 'initdb'), ['-D', data, '-U', 'iceguard', '--auth=trust', '-E', 'UTF8', '--no-sync'], { stdio: 'ignore', ...(user ?? {}) })
  const port = await freePort()
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`
  const pgCtl = async (args: string[]): Promise<void> => {
    await new Promise<void>((resolve, reject) => {
      execFile(path.join(bin, 'pg_ctl'), ['-D', data, '-l', path.join(dir, 'server.log'), '-w', '-t', '60', ...args], { ...(user ?? {}) },
        (err) => { if (err === null) resolve(); else reject(err) })
    })
  }
  await pgCtl(['start', '-o', options])
  return {
    url: `postgres://iceguard@127.0.0.1:${port}/postgres`,
    restart: async (mode) => { await pgCtl(['restart', '-m', mode]) },
    close: async () => {
      await pgCtl(['stop', '-m', 'immediate']).catch(() => {})
      rmSync(dir, { recursive: true, force: true })
    }
  }
}
