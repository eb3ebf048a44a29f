/**
 * Reading a V8 CPU profile (`node --cpu-prof`): self time of the samples taken in chosen windows,
 * by origin (a package, Node itself, V8, or a project folder), by project file and by function,
 * and the inclusive time of the project's own functions.
 */
import path from 'node:path'
import { PROJECT_DIR } from './processes.js'

export interface ProfileNode {
  id: number
  callFrame: { functionName: string, url: string, lineNumber: number }
  hitCount?: number
  children?: number[]
}
export interface Profile { nodes: ProfileNode[], startTime: number, endTime: number, samples: number[], timeDeltas: number[] }

/** Where a frame's code comes from: a package, Node itself, V8, or a project file. */
function origin (url: string, fn: string): string {
  if (url === '') return fn.startsWith('(') ? fn : '(native/V8)'
  const nm = url.lastIndexOf('node_modules/')
  if (nm !== -1) {
    const rest = url.slice(nm + 13).split('/')
    return rest[0]?.startsWith('@') === true ? `${rest[0]}/${rest[1] ?? ''}` : rest[0] ?? url
  }
  if (url.startsWith('node:')) return 'node (internals)'
  const rel = url.replace(/^file:\/\//, '')
  // Servers run from the compiled copy in .bench-build/ (lib/build.ts): name the source file.
  return rel.startsWith(PROJECT_DIR) ? path.relative(PROJECT_DIR, rel).replace(/^\.bench-build\//, '') : rel
}

/** Self time of the samples taken between `from` and `to` (µs, the monotonic clock V8 and Node share). */
export function summarise (p: Profile, from: number, to: number): string {
  return summariseWindows(p, [[from, to]])
}

/** The same over several windows `[from, to]` (µs, the monotonic clock V8 and Node share). */
export function summariseWindows (p: Profile, windows: ReadonlyArray<readonly [number, number]>): string {
  const nodes = new Map(p.nodes.map(n => [n.id, n]))
  const hits = new Map<number, number>()
  let t = p.startTime
  let total = 0
  const idleIds = new Set(p.nodes.filter(n => n.callFrame.functionName === '(idle)').map(n => n.id))
  let idle = 0
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i] ?? 0
    if (!windows.some(([from, to]) => t >= from && t <= to)) continue
    const id = p.samples[i] ?? 0
    // Shares are of the busy samples: waiting for the network is no one's cost.
    if (idleIds.has(id)) {
      idle++
      continue
    }
    hits.set(id, (hits.get(id) ?? 0) + 1)
    total++
  }
  const parent = new Map<number, number>()
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const label = (n: ProfileNode): string => {
    const o = origin(n.callFrame.url, n.callFrame.functionName)
    return `${n.callFrame.functionName || '(anonymous)'}  ${o}${n.callFrame.url === '' ? '' : `:${n.callFrame.lineNumber + 1}`}`
  }
  // Inclusive time of the project's own functions (and the packages it calls into): each
  // sample counts once for every distinct function on its stack.
  const inclusive = new Map<string, number>()
  for (const [id, h] of hits) {
    const seen = new Set<string>()
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const n = nodes.get(cur)
      if (n === undefined) break
      const o = origin(n.callFrame.url, n.callFrame.functionName)
      if (!(o.startsWith('src/') || o.startsWith('routes/'))) continue
      const key = label(n)
      if (seen.has(key)) continue
      seen.add(key)
      inclusive.set(key, (inclusive.get(key) ?? 0) + h)
    }
  }
  const byFn = new Map<string, number>()
  const byOrigin = new Map<string, number>()
  const byFile = new Map<string, number>()
  for (const [id, h] of hits) {
    const n = nodes.get(id)
    if (n === undefined) continue
    const o = origin(n.callFrame.url, n.callFrame.functionName)
    const key = `${n.callFrame.functionName || '(anonymous)'}  ${o}${n.callFrame.url === '' ? '' : `:${n.callFrame.lineNumber + 1}`}`
    byFn.set(key, (byFn.get(key) ?? 0) + h)
    const group = o.startsWith('src/') || o.startsWith('routes/') ? o.split('/').slice(0, 2).join('/') : o
    byOrigin.set(group, (byOrigin.get(group) ?? 0) + h)
    byFile.set(o, (byFile.get(o) ?? 0) + h)
  }
  const pct = (h: number): string => `${(100 * h / total).toFixed(1).padStart(5)}%`
  const seconds = windows.reduce((sum, [from, to]) => sum + to - from, 0) / 1e6
  const lines = [`${total} busy samples (and ${idle} idle) during the measured ${seconds.toFixed(1)} s`, '', 'Self time by origin:']
  for (const [k, v] of [...byOrigin].sort((a, b) => b[1] - a[1]).slice(0, 20)) lines.push(`  ${pct(v)}  ${k}`)
  lines.push('', 'Self time by file (top 25):')
  for (const [k, v] of [...byFile].sort((a, b) => b[1] - a[1]).slice(0, 25)) lines.push(`  ${pct(v)}  ${k}`)
  lines.push('', 'Inclusive time of project functions (top 25):')
  for (const [k, v] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, 25)) lines.push(`  ${pct(v)}  ${k}`)
  lines.push('', 'Self time by function (top 30):')
  for (const [k, v] of [...byFn].sort((a, b) => b[1] - a[1]).slice(0, 30)) lines.push(`  ${pct(v)}  ${k}`)
  return lines.join('\n')
}
