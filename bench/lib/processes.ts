/**
 * Starting and stopping the servers of a benchmark run. Each runs in its own process group so
 * that stopping it also stops what it started (nginx workers); every one is stopped by its pid
 * when the run ends, fails or is interrupted. Node children also stop when their IPC channel to
 * the runner closes (usage-probe.ts), so none outlives a runner that was killed.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { appendFileSync, closeSync, openSync, readFileSync } from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

export const BENCH_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
export const PROJECT_DIR = path.resolve(BENCH_DIR, '..')
/** Where lib/build.ts puts the compiled project and bench servers. */
export const BUILD_DIR = path.join(PROJECT_DIR, '.bench-build')

export interface Server {
  name: string
  child: ChildProcess
  /** true when the child reports its own usage over IPC */
  probe: boolean
  output: () => string
  exited: Promise<void>
}

const running = new Set<Server>()

export function which (cmd: string): string | null {
  try {
    return execFileSync('sh', ['-c', `command -v ${cmd}`], { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim() || null
  } catch {
    return null
  }
}

/** `taskset -c <cpus>` in front of argv when pinning is asked for and possible. */
export function pinned (argv: string[], cpus: string | null): string[] {
  return cpus === null ? argv : ['taskset', '-c', cpus, ...argv]
}

/**
 * argv that runs the compiled form of a project file (`src/main/server.ts`, `bench/stub/…`; see
 * build.ts) under plain Node, with the usage probe loaded.
 */
export function nodeServer (file: string, args: string[] = [], nodeFlags: string[] = []): string[] {
  const js = (rel: string): string => path.isAbsolute(rel) ? rel : path.join(BUILD_DIR, rel.replace(/\.ts$/, '.js'))
  return [process.execPath, ...nodeFlags, '--import', pathToFileURL(js('bench/lib/usage-probe.ts')).href, js(file), ...args]
}

export function start (name: string, argv: string[], opts: { env?: NodeJS.ProcessEnv, probe?: boolean, logDir: string }): Server {
  const probe = opts.probe ?? false
  const [cmd, ...rest] = argv
  if (cmd === undefined) throw new Error(`no command for ${name}`)
  // Output goes to a file, not a pipe: a server that logs every request must not cost the
  // runner (which shares the machine) CPU, nor block when nobody reads.
  const logFile = path.join(opts.logDir, `${name}.log`)
  const fd = openSync(logFile, 'w')
  const child = spawn(cmd, rest, {
    cwd: PROJECT_DIR,
    env: { ...process.env, ...opts.env },
    stdio: probe ? ['pipe', fd, fd, 'ipc'] : ['pipe', fd, fd],
    detached: true
  })
  closeSync(fd)
  const exited = new Promise<void>(resolve => child.once('exit', () => {
    running.delete(server)
    resolve()
  }))
  child.once('error', err => appendFileSync(logFile, `\n${name}: ${err.message}\n`))
  const output = (): string => {
    try {
      return readFileSync(logFile, 'utf8').slice(0, 65536)
    } catch {
      return ''
    }
  }
  const server: Server = { name, child, probe, output, exited }
  running.add(server)
  return server
}

/** Resolves with the first output line that parses as a JSON object holding `key`. */
export async function firstJsonLine (server: Server, key: string, timeoutMs: number): Promise<Record<string, unknown>> {
  const end = Date.now() + timeoutMs
  while (Date.now() < end) {
    for (const line of server.output().split('\n')) {
      if (!line.startsWith('{')) continue
      try {
        const v = JSON.parse(line) as Record<string, unknown>
        if (typeof v === 'object' && v !== null && key in v) return v
      } catch {
        // a log line, not the one asked for
      }
    }
    if (server.child.exitCode !== null || server.child.signalCode !== null) {
      throw new Error(`${server.name} exited during start-up:\n${server.output()}`)
    }
    await sleep(50)
  }
  throw new Error(`${server.name} did not start within ${timeoutMs / 1000} s:\n${server.output()}`)
}

export function sleep (ms: number): Promise<void> {
  return new Promise(resolve => setTimeout(resolve, ms))
}

/** A port that was free a moment ago on 127.0.0.1 (for servers that cannot report theirs). */
export function freePort (): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const a = srv.address()
      const port = typeof a === 'object' && a !== null ? a.port : 0
      srv.close(() => resolve(port))
    })
  })
}

export async function waitForPort (server: Server, port: number, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs
  while (Date.now() < end) {
    if (server.child.exitCode !== null || server.child.signalCode !== null) {
      throw new Error(`${server.name} exited during start-up:\n${server.output()}`)
    }
    const ok = await new Promise<boolean>(resolve => {
      const s = net.connect({ port, host: '127.0.0.1' })
      s.once('connect', () => { s.destroy(); resolve(true) })
      s.once('error', () => resolve(false))
    })
    if (ok) return
    await sleep(100)
  }
  throw new Error(`${server.name} did not listen on 127.0.0.1:${port} within ${timeoutMs / 1000} s:\n${server.output()}`)
}

export async function stop (server: Server): Promise<void> {
  const c = server.child
  if (c.exitCode !== null || c.signalCode !== null || c.pid === undefined) return
  try { process.kill(-c.pid, 'SIGTERM') } catch {}
  const done = await Promise.race([server.exited.then(() => true), sleep(3000).then(() => false)])
  if (!done) {
    try { process.kill(-c.pid, 'SIGKILL') } catch {}
    await server.exited
  }
}

/** Last resort on exit or interruption: every server still running, by its process group. */
export function killAll (): void {
  for (const s of running) {
    const pid = s.child.pid
    if (pid !== undefined) {
      try { process.kill(-pid, 'SIGKILL') } catch {}
    }
  }
  running.clear()
}
