/**
 * Runs the load generator once: wrk when installed (lighter, and what the reference figures
 * were measured with), else the Node fallback in node-loader.ts. Its own CPU time is read from
 * the wrapping shell's cutime/cstime, so the runner can tell how much else ran on the machine.
 */
import { spawn } from 'node:child_process'
import path from 'node:path'
import { BENCH_DIR, BUILD_DIR, PROJECT_DIR, pinned } from './processes.js'
import { tickUs } from './usage.js'

export interface LoadSpec {
  url: string
  method: 'GET' | 'POST'
  bodyFile?: string
  /** A GET sent first on every connection (its answers are not counted). */
  opener?: string
  seconds: number
  connections: number
  threads: number
  cpus: string | null
}

export interface LoadResult {
  requests: number
  durationUs: number
  bytes: number
  socketErrors: number
  non2xx: number
  timeouts: number
  latencyUs: { p50: number, p90: number, p99: number, max: number, mean: number }
  /** CPU time the load generator used, µs; null where /proc is missing */
  loaderCpuUs: number | null
}

export type Loader = 'wrk' | 'node'

function argv (loader: Loader, s: LoadSpec): string[] {
  if (loader === 'wrk') {
    return ['wrk', `-t${Math.min(s.threads, s.connections)}`, `-c${s.connections}`, `-d${Math.max(1, Math.round(s.seconds))}s`, '--timeout', '10s', '-s', path.join(BENCH_DIR, 'wrk', 'request.lua'), s.url]
  }
  return [process.execPath, path.join(BUILD_DIR, 'bench', 'lib', 'node-loader.js'), s.url, String(s.seconds), String(s.connections), s.method, s.bodyFile ?? '']
}

export function runLoad (loader: Loader, spec: LoadSpec): Promise<LoadResult> {
  // The shell waits for the loader, then prints its own /proc stat: fields 16 and 17 (cutime,
  // cstime) are then the loader's CPU time.
  const script = '"$@"; rc=$?; [ -r /proc/$$/stat ] && echo "LOADER_STAT $(cat /proc/$$/stat)"; exit $rc'
  const full = pinned(['sh', '-c', script, 'sh', ...argv(loader, spec)], spec.cpus)
  return new Promise((resolve, reject) => {
    const child = spawn(full[0] ?? 'sh', full.slice(1), {
      cwd: PROJECT_DIR,
      env: { ...process.env, BENCH_METHOD: spec.method, BENCH_BODY: spec.bodyFile ?? '', BENCH_OPENER: spec.opener ?? '', BENCH_OPENER_PER_THREAD: String(Math.ceil(spec.connections / Math.min(spec.threads, spec.connections))) },
      stdio: ['ignore', 'pipe', 'pipe']
    })
    let out = ''
    child.stdout.on('data', d => { out += d })
    child.stderr.on('data', d => { out += d })
    const killer = setTimeout(() => child.kill('SIGKILL'), (spec.seconds + 30) * 1000)
    child.on('error', reject)
    child.on('exit', code => {
      clearTimeout(killer)
      const m = /BENCH_RESULT (\{.*\})/.exec(out)
      if (code !== 0 || m === null) return reject(new Error(`load generator failed (exit ${code}):\n${out.slice(0, 4000)}`))
      const r = JSON.parse(m[1] ?? '{}') as LoadResult
      r.loaderCpuUs = null
      const st = /LOADER_STAT (.*)/.exec(out)
      if (st !== null) {
        const s = st[1] ?? ''
        const f = s.slice(s.lastIndexOf(')') + 2).split(' ')
        r.loaderCpuUs = (Number(f[13]) + Number(f[14])) * tickUs()
      }
      resolve(r)
    })
  })
}
