/**
 * One cell of the benchmark: a workload against one target, with the CPU time the proxy, the
 * stub and the load generator spent on it, and the upstream requests it caused.
 */
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import os from 'node:os'
import { request } from 'undici'
import { runLoad, type LoadResult } from './load.js'
import type { Options, Target } from './options.js'
import { usageOf, type Running } from './targets.js'
import { machineTicks, tickUs } from './usage.js'
import type { Workload } from './workloads.js'

export interface StubCounters {
  config: number
  loadTable: number
  loadTableRefs: number
  notModified: number
  commit: number
  schemaCommit: number
  commitBytes: number
  other: number
}

export interface Cell {
  workload: string
  target: Target
  connections: number
  requests: number
  seconds: number
  rps: number
  mbps: number
  p50Ms: number
  p90Ms: number
  p99Ms: number
  maxMs: number
  /** responses with another status than expected, and socket errors */
  errors: number
  /** CPU µs per request from the process's own accounting (null: direct, or not measurable) */
  proxyCpuUs: number | null
  stubCpuUs: number | null
  loaderCpuUs: number | null
  proxyPeakRssMb: number | null
  /** CPU used by everything else on the machine during the cell, % of one core */
  otherCpuPct: number | null
  upstreamPerRequest: { loadTable: number, notModified: number, commit: number, total: number }
}

export async function stubCounters (stubUrl: string, reset = false): Promise<StubCounters> {
  if (reset) await (await request(`${stubUrl}/__stub/reset`, { method: 'POST' })).body.dump()
  const res = await request(`${stubUrl}/__stub/stats`)
  return await res.body.json() as StubCounters
}

export async function measure (o: Options, w: Workload, t: Running & { target: Target }, stub: Running, connections = o.connections): Promise<Cell> {
  const spec = {
    url: t.url + w.path,
    method: w.method,
    ...(w.bodyFile === undefined ? {} : { bodyFile: w.bodyFile }),
    ...(w.opener === undefined ? {} : { opener: t.url + w.opener }),
    connections,
    threads: connections === 1 ? 1 : o.threads,
    cpus: o.cpus.loader
  }
  if (o.quietWait > 0) await waitQuiet(o.quietWait)
  if (o.warmup > 0) await runLoad(o.loader, { ...spec, seconds: o.warmup })
  await stubCounters(stub.url, true)
  const p0 = await usageOf(t, true)
  const s0 = await usageOf(stub)
  const m0 = machineTicks()
  const me0 = process.cpuUsage()
  const r: LoadResult = await runLoad(o.loader, { ...spec, seconds: o.seconds })
  const me = process.cpuUsage(me0)
  const m1 = machineTicks()
  const s1 = await usageOf(stub)
  const p1 = await usageOf(t)
  const c = await stubCounters(stub.url)
  const n = Math.max(1, r.requests)
  const secs = r.durationUs / 1e6
  const proxyCpu = p0 !== null && p1 !== null ? p1.cpuUs - p0.cpuUs : null
  const stubCpu = s0 !== null && s1 !== null ? s1.cpuUs - s0.cpuUs : null
  let otherCpuPct: number | null = null
  if (m0 !== null && m1 !== null && r.loaderCpuUs !== null) {
    const busyUs = (m1.busy - m0.busy) * tickUs()
    const ours = (proxyCpu ?? 0) + (stubCpu ?? 0) + r.loaderCpuUs + me.user + me.system
    otherCpuPct = Math.max(0, (busyUs - ours) / (secs * 1e6) * 100)
  }
  const expected = w.expect(t.target)
  // wrk counts every status outside 2xx/3xx; where a refusal is expected, that is the answer.
  const wrongStatus = expected >= 400 ? n - r.non2xx : r.non2xx
  return {
    workload: w.name,
    target: t.target,
    connections,
    requests: r.requests,
    seconds: secs,
    rps: r.requests / secs,
    mbps: r.bytes / secs / 1e6,
    p50Ms: r.latencyUs.p50 / 1000,
    p90Ms: r.latencyUs.p90 / 1000,
    p99Ms: r.latencyUs.p99 / 1000,
    maxMs: r.latencyUs.max / 1000,
    errors: wrongStatus + r.socketErrors + r.timeouts,
    proxyCpuUs: proxyCpu === null ? null : proxyCpu / n,
    stubCpuUs: stubCpu === null ? null : stubCpu / n,
    loaderCpuUs: r.loaderCpuUs === null ? null : r.loaderCpuUs / n,
    proxyPeakRssMb: p1?.peakRss == null ? null : p1.peakRss / 1048576,
    otherCpuPct,
    upstreamPerRequest: {
      loadTable: c.loadTable / n,
      notModified: c.notModified / n,
      commit: c.commit / n,
      total: (c.loadTable + c.commit + c.config + c.other) / n
    }
  }
}

/** Waits (at most `seconds`) until the machine's other processes use under 10% of a core. */
async function waitQuiet (seconds: number): Promise<void> {
  const end = Date.now() + seconds * 1000
  while (Date.now() < end) {
    const a = machineTicks()
    await new Promise(resolve => setTimeout(resolve, 500))
    const b = machineTicks()
    if (a === null || b === null) return
    if ((b.busy - a.busy) / Math.max(1, b.total - a.total) * os.cpus().length * 100 < 10) return
  }
}

interface Answer { status: number, sha: string, bytes: number, body: string }

export interface UpstreamCount {
  requests: number
  /** upstream calls per client request, counted by the stub */
  loadTable: number
  loadTableRefs: number
  notModified: number
  commit: number
  total: number
}

/**
 * Exact upstream requests per client request: `n` requests one after another (nothing in
 * flight when the counters are read, unlike under wrk, which stops mid-request).
 */
export async function countUpstream (w: Workload, t: Running, stubUrl: string, n: number): Promise<UpstreamCount> {
  await stubCounters(stubUrl, true)
  for (let i = 0; i < n; i++) await call(t.url, w)
  const c = await stubCounters(stubUrl)
  return {
    requests: n,
    loadTable: c.loadTable / n,
    loadTableRefs: c.loadTableRefs / n,
    notModified: c.notModified / n,
    commit: c.commit / n,
    total: (c.loadTable + c.commit + c.config + c.other) / n
  }
}

async function call (base: string, w: Workload): Promise<Answer> {
  const body = w.bodyFile === undefined ? null : readFileSync(w.bodyFile)
  const res = await request(base + w.path, { method: w.method, body, headers: body === null ? {} : { 'content-type': 'application/json' } })
  const buf = Buffer.from(await res.body.arrayBuffer())
  return { status: res.statusCode, sha: createHash('sha256').update(buf).digest('hex'), bytes: buf.length, body: buf.length < 65536 ? buf.toString() : '' }
}

/**
 * Before measuring: every target answers each workload with the expected status, and a 200
 * carries exactly the bytes the upstream sent (a proxy must not re-encode metadata). Returns
 * the problems found.
 */
export async function verify (w: Workload, t: Running & { target: Target }, stubUrl: string): Promise<string[]> {
  const [direct, got] = await Promise.all([call(stubUrl, w), call(t.url, w)])
  const expected = w.expect(t.target)
  const problems: string[] = []
  if (got.status !== expected) problems.push(`${w.name} via ${t.target}: status ${got.status}, expected ${expected}: ${got.body.slice(0, 400)}`)
  else if (expected === 200 && got.sha !== direct.sha) problems.push(`${w.name} via ${t.target}: ${got.bytes} B differ from the upstream's ${direct.bytes} B`)
  else if (expected !== 200) {
    try {
      const e = JSON.parse(got.body) as { error?: { code?: unknown, message?: unknown, type?: unknown } }
      if (e.error?.code !== expected || typeof e.error.message !== 'string' || typeof e.error.type !== 'string') {
        problems.push(`${w.name} via ${t.target}: the ${expected} is not an Iceberg ErrorModel: ${got.body}`)
      }
    } catch {
      problems.push(`${w.name} via ${t.target}: the ${expected} body is not JSON: ${got.body}`)
    }
  }
  return problems
}
