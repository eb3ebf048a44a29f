/**
 * The run's report: the tables in Markdown, and the targets of the performance issue judged
 * from ratios measured in this run (never from absolute figures: the machines are shared).
 */
import type { Cell, UpstreamCount } from './measure.js'
import type { Target } from './options.js'

export interface MemoryCheck {
  connections: number
  seconds: number
  responseBytes: number
  rssBeforeMb: number
  rounds: Array<{ peakRssMb: number, rssAfterMb: number, requests: number, errors: number }>
}

export interface EngineRun {
  command: string
  ok: boolean
  output: string
}

export interface Judgement {
  target: string
  measured: string
  limit: string
  /** null: not measured, or a reference row */
  met: boolean | null
  /** A figure shown next to the targets for comparison, not a target itself. */
  reference?: true
}

export interface RunReport {
  started: string
  elapsedS: number
  machine: Record<string, string | number | boolean | null>
  settings: Record<string, string | number>
  sizes: Record<string, number>
  cells: Cell[]
  latency: Cell[]
  /** exact upstream requests per commit through iceguard, from sequential requests */
  upstream: Record<string, UpstreamCount>
  memory: MemoryCheck | null
  engine: EngineRun | null
  /** bench/gate-parts.ts: the gate's parts measured in process */
  gateParts: EngineRun | null
  verification: string[]
  notes: string[]
  judgements: Judgement[]
}

const isNum = (x: number | null | undefined): x is number => typeof x === 'number' && Number.isFinite(x)
const f0 = (x: number | null | undefined): string => (isNum(x) ? Math.round(x).toLocaleString('en-US') : '–')
const f1 = (x: number | null | undefined): string => (isNum(x) ? x.toFixed(1) : '–')
const f2 = (x: number | null | undefined): string => (isNum(x) ? x.toFixed(2) : '–')

function cell (cells: Cell[], workload: string, target: Target): Cell | undefined {
  return cells.find(c => c.workload === workload && c.target === target)
}

function ratio (a: number | null | undefined, b: number | null | undefined): number | null {
  return isNum(a) && isNum(b) && b > 0 ? a / b : null
}

/** The targets of the performance issue, each judged from this run's cells. */
export function judge (r: Omit<RunReport, 'judgements'>): Judgement[] {
  const out: Judgement[] = []
  const add = (target: string, value: number | null, limit: number, kind: 'max' | 'min', unit = '×'): void => {
    out.push({
      target,
      measured: value === null ? 'not measured' : `${f2(value)}${unit}`,
      limit: `${kind === 'max' ? '≤' : '≥'} ${limit}${unit}`,
      met: value === null ? null : kind === 'max' ? value <= limit : value >= limit
    })
  }
  const reference = (target: string, value: number | null, unit = '×'): void => {
    out.push({ target, measured: value === null ? 'not measured' : `${f2(value)}${unit}`, limit: '–', met: null, reference: true })
  }
  for (const [w, label] of [['load-small', 'small loadTable'], ['load-small-warm', 'small loadTable after GET /v1/config'], ['data-commit', 'fast-path commit'],
    ['data-commit-warm', 'fast-path commit after GET /v1/config'], ['load-large', '1 MB loadTable']] as const) {
    const ig = cell(r.cells, w, 'iceguard')
    add(`${label}: CPU/request vs nginx`, ratio(ig?.proxyCpuUs, cell(r.cells, w, 'nginx')?.proxyCpuUs), 3, 'max')
    if (w !== 'load-large') {
      add(`${label}: CPU/request vs stock Fastify forwarder`, ratio(ig?.proxyCpuUs, cell(r.cells, w, 'fastify')?.proxyCpuUs), 0.5, 'max')
      add(`${label}: throughput vs nginx`, ratio(ig?.rps, cell(r.cells, w, 'nginx')?.rps), 0.5, 'min')
    }
    add(`${label}: CPU/request vs bare Node forwarder`, ratio(ig?.proxyCpuUs, cell(r.cells, w, 'node')?.proxyCpuUs), 1, 'max')
  }
  const schema = cell(r.cells, 'schema-commit', 'iceguard')
  add('schema commit: upstream requests per commit', r.upstream['schema-commit']?.total ?? null, 2, 'max', '')
  // The gate's price: the same table, so both commits' answers carry the same metadata (~80 KB;
  // the small table's commit answers ~9 KB).
  add('schema commit: p50 latency vs fast-path commit on the same table, 1 connection',
    ratio(cell(r.latency, 'schema-commit', 'iceguard')?.p50Ms, cell(r.latency, 'data-commit-evolving', 'iceguard')?.p50Ms), 2.5, 'max')
  // For comparison only. The small table's commit: earlier runs judged against it. At many
  // connections p50 is queueing behind the CPU each request costs, so that ratio restates the
  // gate's CPU against a fast-path commit's (the targets allow validation up to ~1 ms of CPU
  // where a forwarded commit costs ~0.1 ms), not the latency a client sees from the gate.
  reference('schema commit: p50 latency vs fast-path commit on the small table, 1 connection',
    ratio(cell(r.latency, 'schema-commit', 'iceguard')?.p50Ms, cell(r.latency, 'data-commit', 'iceguard')?.p50Ms))
  reference(`schema commit: p50 latency vs fast-path commit, ${r.settings.connections} connections`,
    ratio(schema?.p50Ms, cell(r.cells, 'data-commit', 'iceguard')?.p50Ms))
  // One connection: nothing on iceguard's event loop may hold a request up (the tail), the gate's
  // work stays small, and plain forwarding costs little more than nginx's.
  for (const w of ['load-small', 'data-commit', 'schema-commit-small', 'schema-commit'] as const) {
    const ig = cell(r.latency, w, 'iceguard')
    const direct = cell(r.latency, w, 'direct')
    add(`${w}, 1 connection: p99 above the stub's direct p99`, isNum(ig?.p99Ms) && isNum(direct?.p99Ms) ? ig.p99Ms - direct.p99Ms : null, 2, 'max', ' ms')
  }
  add('schema-commit-small (50 columns, one schema), 1 connection: iceguard CPU per commit', cell(r.latency, 'schema-commit-small', 'iceguard')?.proxyCpuUs ?? null, 500, 'max', ' µs')
  // The 20-schema table answers ~80 KB to the commit and to the load: relaying that is most of the difference.
  reference('schema-commit (50 columns, 20 schemas), 1 connection: iceguard CPU per commit', cell(r.latency, 'schema-commit', 'iceguard')?.proxyCpuUs ?? null, ' µs')
  for (const w of ['data-commit', 'load-small'] as const) {
    add(`${w}, 1 connection: CPU/request vs nginx`, ratio(cell(r.latency, w, 'iceguard')?.proxyCpuUs, cell(r.latency, w, 'nginx')?.proxyCpuUs), 1.5, 'max')
  }
  if (r.gateParts?.ok === true) {
    // bench/gate-parts.ts prints "<what>  <µs>" rows; a row not found leaves the target unjudged.
    const us = (label: string): number | null => {
      const line = r.gateParts?.output.split('\n').find(l => l.startsWith(label))
      const m = line === undefined ? null : /([\d.]+)\s*$/.exec(line)
      return m === null ? null : Number(m[1]) / 1000
    }
    add('gate: typical base (50 columns, 20 schemas) parsed and validated, first read', us('base: bytes → TableMetadata, cold'), 1, 'max', ' ms')
    reference('gate: the same base re-read after a commit changed its ETag', us('base: after a commit changed the ETag'), ' ms')
  }
  if (r.engine?.ok === true) {
    // bench/engine.ts prints rows "fields  min-ms  median-ms …"; its owner decides the format,
    // so a row that is not found leaves the target unjudged rather than failing the run.
    const rows = new Map<number, number>()
    for (const line of r.engine.output.split('\n')) {
      const m = /^\s*\|?\s*([\d,]+)\s*\|?\s+([\d.]+)/.exec(line)
      if (m !== null) rows.set(Number((m[1] ?? '').replaceAll(',', '')), Number(m[2]))
    }
    add('evolution engine: 10,000 fields, fastest run', rows.get(10_000) ?? null, 10, 'max', ' ms')
    const small = rows.get(1000)
    const big = rows.get(100_000)
    const mid = rows.get(10_000)
    add('evolution engine: time per field at 100,000 vs 1,000 fields (linear ≈ 1)',
      small !== undefined && big !== undefined ? (big / 100_000) / (small / 1000) : null, 2, 'max')
    // The step where a cost that is not linear shows first: the young generation fills up there.
    add('evolution engine: time per field at 100,000 vs 10,000 fields (linear ≈ 1)',
      mid !== undefined && big !== undefined ? (big / 100_000) / (mid / 10_000) : null, 1.5, 'max')
  }
  if (r.memory !== null && r.memory.rounds.length > 0) {
    const m = r.memory
    const peak = Math.max(...m.rounds.map(x => x.peakRssMb))
    const total = m.connections * m.responseBytes / 1048576
    // Flat: the peak grows by well under what buffering the responses would take, and the RSS
    // left after each round does not climb from round to round.
    out.push({
      target: `RSS under ${m.connections} concurrent 1 MB loads: growth vs ${f0(total)} MB if buffered`,
      measured: `+${f0(peak - m.rssBeforeMb)} MB`,
      limit: `≤ ${f0(total / 2)} MB`,
      met: peak - m.rssBeforeMb <= total / 2
    })
    const first = m.rounds[0]?.rssAfterMb ?? 0
    const last = m.rounds.at(-1)?.rssAfterMb ?? 0
    out.push({ target: 'RSS after the last round vs after the first', measured: `${last - first >= 0 ? '+' : ''}${f0(last - first)} MB`, limit: '≤ 16 MB', met: last - first <= 16 })
  }
  return out
}

export function markdown (r: RunReport): string {
  const L: string[] = []
  const m = r.machine
  L.push(`Run ${r.started} on ${String(m.cpus)} × ${String(m.cpuModel)}, ${String(m.memoryGb)} GB, Linux ${String(m.kernel)}; Node ${String(m.node)}; ${String(m.nginx ?? 'nginx not installed')}; load from ${String(m.loader)}. ` +
    `${r.settings.connections} connections, ${r.settings.threads} loader threads, ${r.settings.warmup} s warm-up + ${r.settings.seconds} s per cell; ` +
    `${m.pinned === true ? 'load generator pinned to CPU 0, upstream stub and proxy to CPU 1' : 'no CPU pinning'}; iceguard log level ${r.settings.logLevel} (audit lines are written at every level but silent). Took ${Math.round(r.elapsedS)} s.`)
  L.push('')
  const others = r.cells.map(c => c.otherCpuPct).filter(isNum).sort((a, b) => a - b)
  const busy = others[Math.floor(others.length / 2)]
  const notes = [...r.notes]
  if (busy !== undefined && busy > 25) {
    notes.push(`other processes used a median ${f0(busy)}% of a core during the cells: absolute figures are inflated, compare ratios only (or rerun with BENCH_QUIET_WAIT=30)`)
  }
  if (notes.length > 0) L.push(...notes.map(n => `- Note: ${n}`), '')
  L.push('| workload | target | req/s | p50 ms | p99 ms | proxy CPU µs/req | proxy peak RSS MB | ≈ upstream req/req | errors | other CPU % |')
  L.push('|---|---|--:|--:|--:|--:|--:|--:|--:|--:|')
  for (const c of r.cells) {
    L.push(`| ${c.workload} | ${c.target} | ${f0(c.rps)} | ${f2(c.p50Ms)} | ${f2(c.p99Ms)} | ${f1(c.proxyCpuUs)} | ${f0(c.proxyPeakRssMb)} | ${f2(c.upstreamPerRequest.total)} | ${c.errors} | ${f0(c.otherCpuPct)} |`)
  }
  L.push('', 'Ratios, each from two cells measured back to back (req/s, p50, proxy CPU per request):', '')
  L.push('| workload | iceguard/direct req/s | iceguard/nginx req/s | iceguard/nginx CPU | iceguard/fastify CPU | iceguard/node CPU | iceguard/nginx p50 |')
  L.push('|---|--:|--:|--:|--:|--:|--:|')
  const workloads = [...new Set(r.cells.map(c => c.workload))]
  for (const w of workloads) {
    const ig = cell(r.cells, w, 'iceguard')
    if (ig === undefined) continue
    const d = cell(r.cells, w, 'direct')
    const n = cell(r.cells, w, 'nginx')
    L.push(`| ${w} | ${f2(ratio(ig.rps, d?.rps))} | ${f2(ratio(ig.rps, n?.rps))} | ${f2(ratio(ig.proxyCpuUs, n?.proxyCpuUs))} | ${f2(ratio(ig.proxyCpuUs, cell(r.cells, w, 'fastify')?.proxyCpuUs))} | ${f2(ratio(ig.proxyCpuUs, cell(r.cells, w, 'node')?.proxyCpuUs))} | ${f2(ratio(ig.p50Ms, n?.p50Ms))} |`)
  }
  const counted = Object.entries(r.upstream)
  if (counted.length > 0) {
    L.push('', 'Upstream requests per commit through iceguard (20 commits one after another, counted by the stub):', '')
    L.push('| workload | total | loadTable | of which `snapshots=refs` | of which 304 Not Modified | commit |', '|---|--:|--:|--:|--:|--:|')
    for (const [w, u] of counted) L.push(`| ${w} | ${f2(u.total)} | ${f2(u.loadTable)} | ${f2(u.loadTableRefs)} | ${f2(u.notModified)} | ${f2(u.commit)} |`)
  }
  if (r.latency.length > 0) {
    const targets = [...new Set(r.latency.map(c => c.target))]
    L.push('', 'One connection (no queueing): p50 / p99 ms, and the proxy\'s CPU µs per request:', '')
    const vsBaseline = targets.includes('baseline')
    L.push(`| workload | ${targets.map(t => `${t} p50 / p99`).join(' | ')} | ${targets.filter(t => t !== 'direct').map(t => `${t} CPU µs/req`).join(' | ')} | iceguard/nginx CPU |${vsBaseline ? ' iceguard/baseline CPU |' : ''} other CPU % |`)
    L.push(`|---|${targets.map(() => '--:').join('|')}|${targets.filter(t => t !== 'direct').map(() => '--:').join('|')}|--:|${vsBaseline ? '--:|' : ''}--:|`)
    for (const w of [...new Set(r.latency.map(c => c.workload))]) {
      const at = (t: Target): Cell | undefined => cell(r.latency, w, t)
      const lat = targets.map(t => { const c = at(t); return c === undefined ? '–' : `${f2(c.p50Ms)} / ${f2(c.p99Ms)}` })
      const cpu = targets.filter(t => t !== 'direct').map(t => f1(at(t)?.proxyCpuUs))
      const other = Math.max(...r.latency.filter(c => c.workload === w).map(c => c.otherCpuPct ?? 0))
      const base = vsBaseline ? ` ${f2(ratio(at('iceguard')?.proxyCpuUs, at('baseline')?.proxyCpuUs))} |` : ''
      L.push(`| ${w} | ${lat.join(' | ')} | ${cpu.join(' | ')} | ${f2(ratio(at('iceguard')?.proxyCpuUs, at('nginx')?.proxyCpuUs))} |${base} ${f0(other)} |`)
    }
  }
  if (r.memory !== null) {
    const mm = r.memory
    L.push('', `Memory: ${mm.connections} concurrent loads of the ${f0(mm.responseBytes / 1024)} KB table through iceguard, ${mm.rounds.length} rounds of ${mm.seconds} s. RSS before: ${f0(mm.rssBeforeMb)} MB.`, '')
    L.push('| round | requests | errors | peak RSS MB | RSS after MB |', '|--:|--:|--:|--:|--:|')
    mm.rounds.forEach((x, i) => L.push(`| ${i + 1} | ${f0(x.requests)} | ${x.errors} | ${f0(x.peakRssMb)} | ${f0(x.rssAfterMb)} |`))
  }
  L.push('', '### Targets', '', '| target | measured | limit | met |', '|---|--:|--:|---|')
  for (const j of r.judgements) L.push(`| ${j.target} | ${j.measured} | ${j.limit} | ${j.reference === true && j.measured !== 'not measured' ? 'for comparison' : j.met === null ? 'not measured' : j.met ? 'yes' : '**no**'} |`)
  if (r.verification.length > 0) L.push('', '**Verification problems** (measured anyway):', '', ...r.verification.map(v => `- ${v}`))
  for (const [title, run] of [['Evolution engine', r.engine], ['Gate parts', r.gateParts]] as const) {
    if (run === null) continue
    L.push('', `### ${title} (\`${run.command}\`)`, '')
    const out = run.output.trim()
    // A Markdown table is kept as it is; plain text is shown as printed.
    if (run.ok) L.push(out.startsWith('|') ? out : `\`\`\`text\n${out}\n\`\`\``)
    else L.push(`Failed:\n\n\`\`\`text\n${out.slice(0, 4000)}\n\`\`\``)
  }
  return L.join('\n') + '\n'
}
