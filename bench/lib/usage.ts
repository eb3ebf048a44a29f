/**
 * CPU time and memory of the processes under measurement.
 *
 * Node servers report their own `process.cpuUsage()` and RSS over IPC (usage-probe.ts); nginx,
 * which cannot, is read from /proc/<pid>/stat and /proc/<pid>/status for its whole process
 * tree (master and workers). Both count every thread of the process, user and system time.
 */
import { execFileSync, type ChildProcess } from 'node:child_process'
import { existsSync, readFileSync, readdirSync } from 'node:fs'

export interface UsageReport {
  type: 'usage'
  /** user + system CPU time since the process started, µs */
  cpuUs: number
  /** resident set size now, bytes */
  rss: number
  /** highest sampled RSS since the last reset, bytes */
  peakRss: number
  /** rusage maxRSS over the whole life of the process, bytes */
  maxRss: number
  heapUsed: number
}

export interface Usage {
  cpuUs: number
  rss: number | null
  peakRss: number | null
}

/** Asks a Node child started with the usage probe for its usage. */
export function askUsage (child: ChildProcess, resetPeak = false, timeoutMs = 5000): Promise<UsageReport> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.off('message', onMessage)
      reject(new Error('the server did not report its usage'))
    }, timeoutMs)
    function onMessage (msg: unknown): void {
      if (typeof msg === 'object' && msg !== null && (msg as UsageReport).type === 'usage') {
        clearTimeout(timer)
        child.off('message', onMessage)
        resolve(msg as UsageReport)
      }
    }
    child.on('message', onMessage)
    child.send({ type: 'usage', resetPeak })
  })
}

const HAS_PROC = existsSync('/proc/self/stat')
let clockTicks: number | null = null

function ticksPerSecond (): number {
  if (clockTicks === null) {
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100
    } catch {
      clockTicks = 100
    }
  }
  return clockTicks
}

/** Fields of /proc/<pid>/stat after the command name; [0] is the state (field 3). */
function statFields (pid: number): string[] {
  const s = readFileSync(`/proc/${pid}/stat`, 'utf8')
  return s.slice(s.lastIndexOf(')') + 2).split(' ')
}

/** `root` and all its descendants. */
export function processTree (root: number): number[] {
  if (!HAS_PROC) return [root]
  const children = new Map<number, number[]>()
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue
    try {
      const ppid = Number(statFields(Number(d))[1])
      const list = children.get(ppid) ?? []
      list.push(Number(d))
      children.set(ppid, list)
    } catch {
      // the process ended while the tree was read
    }
  }
  const out = [root]
  for (let i = 0; i < out.length; i++) out.push(...(children.get(out[i] ?? -1) ?? []))
  return out
}

function statusKb (pid: number, key: string): number {
  const m = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return m === null ? 0 : Number(m[1]) * 1024
}

/** CPU time and RSS of a process tree from /proc; null where /proc is missing (not Linux). */
export function procUsage (pids: number[]): Usage | null {
  if (!HAS_PROC) return null
  const tickUs = 1e6 / ticksPerSecond()
  let cpuUs = 0
  let rss = 0
  let peakRss = 0
  for (const pid of pids) {
    try {
      const f = statFields(pid)
      cpuUs += (Number(f[11]) + Number(f[12])) * tickUs
      rss += statusKb(pid, 'VmRSS')
      peakRss += statusKb(pid, 'VmHWM')
    } catch {
      // the process ended
    }
  }
  return { cpuUs, rss, peakRss }
}

/** Machine-wide busy and total CPU ticks, to tell how much else ran during a measurement. */
export function machineTicks (): { busy: number, total: number } | null {
  if (!HAS_PROC) return null
  const first = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? ''
  const f = first.trim().split(/\s+/).slice(1).map(Number)
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = f
  const busy = user + nice + system + irq + softirq + steal
  return { busy, total: busy + idle + iowait }
}

export function tickUs (): number {
  return 1e6 / ticksPerSecond()
}
