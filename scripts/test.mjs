/**
 * `npm test`: tap with one job more than the machine has cores. The integration suites spend part
 * of their time waiting (on sockets, on the stalls the fault suites provoke, on child processes),
 * so one more test process than cores keeps the CPU busy: on 2 cores the suite took 5 min 48 s
 * with tap's default of one job per core and 4 min 14 s with three (docs/performance.md).
 * `TAP_JOBS` overrides; any other arguments go to tap as they are.
 */
import { spawn } from 'node:child_process'
import os from 'node:os'

const jobs = process.env.TAP_JOBS ?? String(os.availableParallelism() + 1)
const tap = spawn('tap', ['--jobs', jobs, ...process.argv.slice(2)], { stdio: 'inherit' })
tap.on('exit', (code, signal) => {
  if (signal !== null) process.kill(process.pid, signal)
  else process.exit(code ?? 1)
})
