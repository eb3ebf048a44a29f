/**
 * `npm test`: tap with one job more than the machine has cores. The integration suites spend part
 * of their time waiting (on sockets, on the stalls the fault suites provoke, on child processes),
 * so one more test process than cores keeps the CPU busy: on 2 cores the suite took 5 min 48 s
 * with tap's default of one job per core and 4 min 14 s with three (docs/performance.md).
 * `TAP_JOBS` overrides; any other arguments go to tap as they are.
 *
 * First, `tap build` when tap's test class was built with other plugins than package.json names
 * (a fresh `npm ci`) or in another checkout (a copied or moved one): see scripts/tap-plugins.mjs.
 */
import { spawn } from 'node:child_process'
import os from 'node:os'
import { fileURLToPath } from 'node:url'
import { tapBuildIsStale } from './tap-plugins.mjs'

function run (args) {
  return new Promise((resolve) => {
    const child = spawn('tap', args, { stdio: 'inherit' })
    child.on('exit', (code, signal) => resolve({ code, signal }))
  })
}

function exitLike ({ code, signal }) {
  if (signal !== null) process.kill(process.pid, signal)
  else process.exit(code ?? 1)
}

if (tapBuildIsStale(fileURLToPath(new URL('..', import.meta.url)))) {
  const built = await run(['build'])
  if (built.signal !== null || built.code !== 0) exitLike(built)
}
const jobs = process.env.TAP_JOBS ?? String(os.availableParallelism() + 1)
exitLike(await run(['--jobs', jobs, ...process.argv.slice(2)]))
