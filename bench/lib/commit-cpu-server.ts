/**
 * One iceguard for bench/commit-cpu.ts: a checkout's `src/main/server.ts` started in this process
 * over the given upstream, measuring its own CPU (every thread: the decision store's too) between
 * the runner's `start` and `stop` over IPC, while the runner sends requests from its own process.
 *
 *   node --import tsx bench/lib/commit-cpu-server.ts <checkout> <upstream url> <state dir>
 *
 * Answers `{ url }` once listening; `start` → `{ started }`, `stop` → `{ cpuUs, mainUs, from, to }`
 * (the process's CPU, the serving thread's alone, and the window on the monotonic clock V8's
 * profiles use, all in µs); `close` closes the app and exits, so that
 * `--cpu-prof` writes its profile.
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'

const [checkout, upstream, stateDir] = process.argv.slice(2)
if (checkout === undefined || upstream === undefined || stateDir === undefined) throw new Error('usage: commit-cpu-server.ts <checkout> <upstream url> <state dir>')
const send = (message: object): void => { process.send?.(message) }

interface Running { readonly url: string, readonly app: { close (): Promise<unknown> } }
const server = await import(pathToFileURL(path.resolve(checkout, 'src/main/server.ts')).href) as {
  main (argv: readonly string[], env: NodeJS.ProcessEnv, options: { handleSignals?: boolean }): Promise<Running | undefined>
}
// As the benchmark runs it (bench/run.ts): warn, so the audit line is the one line per commit.
const running = await server.main(['--upstream', upstream, '--port', '0', '--host', '127.0.0.1', '--log-level', 'warn', '--state-dir', stateDir], {}, { handleSignals: false })
if (running === undefined) throw new Error(`iceguard from ${checkout} did not start`)

const micros = (): number => Number(process.hrtime.bigint() / 1000n)
// This thread's own CPU (user + system, µs) from Linux's per-thread accounting, in clock ticks
// (10 ms): coarse, so meaningful over many requests only; undefined elsewhere.
const TICK_US = 10_000
const mainThreadUs = (): number | undefined => {
  try {
    const stat = readFileSync('/proc/thread-self/stat', 'latin1')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) * TICK_US
  } catch {
    return undefined
  }
}
let started = process.cpuUsage()
let mainStarted = mainThreadUs()
let from = micros()
process.on('message', (m: { cmd?: string }) => {
  if (m.cmd === 'start') {
    from = micros()
    started = process.cpuUsage()
    mainStarted = mainThreadUs()
    send({ started: true })
  } else if (m.cmd === 'stop') {
    const used = process.cpuUsage(started)
    const main = mainThreadUs()
    send({ cpuUs: used.user + used.system, ...(main !== undefined && mainStarted !== undefined && { mainUs: main - mainStarted }), from, to: micros() })
  } else if (m.cmd === 'close') {
    void running.app.close().finally(() => process.exit(0))
  }
})
// The runner gone, so is this process.
process.on('disconnect', () => { void running.app.close().finally(() => process.exit(0)) })
send({ url: running.url })
