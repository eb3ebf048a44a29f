/**
 * What an operator scrapes and traces (docs/deployment.md, "Monitoring"): `/metrics` after a
 * scripted run holds prom-client's default process metrics and iceguard's families and parses as
 * the text exposition format; a gated commit sent with a `traceparent` reaches a loopback OTLP/HTTP
 * JSON collector as the documented span tree in the caller's trace, and the catalog receives the
 * context of iceguard's own spans; every metric the dashboard and the alert rules use exists;
 * `promtool check rules` accepts the rules where Debian's `prometheus` package provides it.
 */
import http from 'node:http'
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import { IcebergRestCatalog } from 'iceberg-js'
import parsePrometheusTextFormat from 'parse-prometheus-text-format'
import { cloneSchema, clientShapes, createFixtureTable, loadMeta, type Meta } from '../helpers/gate-fixtures.js'
import { startCatalog, startProxy, type RunningCatalog } from '../helpers/index.js'
import { onEveryTransport } from '../helpers/transports.js'
import { systemTool } from '../helpers/system-tool.js'
import { startTracing } from '../../src/telemetry/start-tracing.js'

const root = join(import.meta.dirname, '..', '..')
const TABLE = '/v1/namespaces/db/tables/t'
/** The spans of one gated write (src/telemetry/tracing.ts). */
const STEPS = ['iceguard.gate', 'iceguard.triage', 'iceguard.base_load', 'iceguard.judge', 'iceguard.forward', 'iceguard.decision.record']

interface OtlpAttribute { key: string, value: { stringValue?: string, intValue?: string | number } }
interface OtlpSpan { traceId: string, spanId: string, parentSpanId?: string, name: string, kind: number, attributes?: OtlpAttribute[] }
interface OtlpExport { resourceSpans: Array<{ resource?: { attributes?: OtlpAttribute[] }, scopeSpans: Array<{ spans: OtlpSpan[] }> }> }

/** An OTLP/HTTP JSON collector on loopback: keeps every span it is sent. */
async function startCollector (t: Test): Promise<{ url: string, spans: OtlpSpan[], services: Set<string> }> {
  const spans: OtlpSpan[] = []
  const services = new Set<string>()
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/traces' && String(req.headers['content-type']).startsWith('application/json')) {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpExport
        for (const rs of body.resourceSpans) {
          const service = rs.resource?.attributes?.find(a => a.key === 'service.name')?.value.stringValue
          if (service !== undefined) services.add(service)
          for (const ss of rs.scopeSpans) spans.push(...ss.spans)
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
      } else {
        res.writeHead(404).end()
      }
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>(resolve => server.close(() => resolve())))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans, services }
}

async function catalogWithTable (t: Test): Promise<{ catalog: RunningCatalog, meta: Meta }> {
  const catalog = await startCatalog(t)
  const ice = new IcebergRestCatalog({ baseUrl: catalog.url })
  await ice.createNamespace({ namespace: ['db'] })
  await createFixtureTable(ice, 't', 2)
  return { catalog, meta: await loadMeta(catalog.url, 'db', 't') }
}

/** A commit adding an optional column: allowed by every policy. */
function addColumn (meta: Meta, name: string): string {
  const added = cloneSchema(meta)
  added.fields.push({ id: meta['last-column-id'] + 1, name, required: false, type: 'string' })
  return JSON.stringify(clientShapes.curl(meta, added, 'db', 't'))
}

function attr (span: OtlpSpan | undefined, key: string): string | number | undefined {
  const v = span?.attributes?.find(a => a.key === key)?.value
  return v?.stringValue ?? (v?.intValue !== undefined ? Number(v.intValue) : undefined)
}

/** `00-<trace>-<span>-01`, split. */
function parseTraceparent (value: unknown): { trace: string, span: string } | undefined {
  const m = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/.exec(String(value))
  return m === null ? undefined : { trace: m[1] as string, span: m[2] as string }
}

async function waitFor<T> (what: () => T | undefined, ms = 10_000): Promise<T | undefined> {
  const until = Date.now() + ms
  for (;;) {
    const got = what()
    if (got !== undefined || Date.now() > until) return got
    await new Promise(resolve => setTimeout(resolve, 50))
  }
}

t.test('traces: a gated commit continues the caller\'s trace, on every transport', async t => {
  const collector = await startCollector(t)
  const tracing = await startTracing({
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_SERVICE_NAME: 'iceguard-under-test'
  })
  t.ok(tracing, 'the OTEL_* settings turn tracing on')
  t.teardown(async () => { await tracing?.shutdown() })

  onEveryTransport(t, t => {
    t.test('the span tree of one gated commit', async t => {
      const { catalog, meta } = await catalogWithTable(t)
      const proxy = await startProxy(t, { upstream: catalog.url, policy: 'builtin:spec' })
      const traceId = randomBytes(16).toString('hex')
      const clientSpan = randomBytes(8).toString('hex')
      catalog.clearRequests()
      const res = await fetch(`${proxy.url}${TABLE}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', traceparent: `00-${traceId}-${clientSpan}-01`, authorization: 'Bearer trace-secret' },
        body: addColumn(meta, `note_${randomBytes(3).toString('hex')}`)
      })
      t.equal(res.status, 200, 'the commit is allowed and forwarded')
      await res.arrayBuffer()
      await tracing?.flush()

      // Exports of the runs side by side may arrive in any order: wait for every step's span.
      const mine = (): OtlpSpan[] | undefined => {
        const spans = collector.spans.filter(s => s.traceId === traceId)
        return STEPS.every(name => spans.some(s => s.name === name)) ? spans : undefined
      }
      const spans = await waitFor(mine) ?? []
      const root = spans.find(s => s.name === 'iceguard.gate')
      t.ok(root, 'a server span for the write, in the caller\'s trace')
      t.equal(root?.parentSpanId, clientSpan, 'whose parent is the caller\'s span')
      t.equal(root?.kind, 2, 'kind SERVER')
      t.equal(attr(root, 'iceberg.table'), 'db.t')
      t.equal(attr(root, 'iceguard.verdict'), 'allow')
      t.equal(attr(root, 'iceguard.kind'), 'update-table')
      t.equal(attr(root, 'http.response.status_code'), 200)
      const children = spans.filter(s => s.parentSpanId === root?.spanId).map(s => s.name)
      for (const name of STEPS.slice(1)) {
        t.ok(children.includes(name), `${name} is a child of the write's span`)
      }
      t.ok(collector.services.has('iceguard-under-test'), 'the service is named by OTEL_SERVICE_NAME')
      t.notOk(JSON.stringify(spans).includes('trace-secret'), 'no span carries the credentials')
      t.notOk(JSON.stringify(spans).includes('"updates"'), 'nor the body')

      // The catalog received the context of iceguard's client spans, in the caller's trace.
      const forward = spans.find(s => s.name === 'iceguard.forward')
      const load = spans.find(s => s.name === 'iceguard.base_load')
      const commit = catalog.requests.find(r => r.method === 'POST')
      const get = catalog.requests.find(r => r.method === 'GET')
      t.same(parseTraceparent(commit?.headers.traceparent), { trace: traceId, span: forward?.spanId }, 'the forwarded commit carries the forward span\'s context')
      t.same(parseTraceparent(get?.headers.traceparent), { trace: traceId, span: load?.spanId }, 'the base load carries the base-load span\'s context')
    })
  })
})

/** Sample names (with `_bucket`, `_sum`, `_count`) and family names in an exposition text. */
function namesIn (text: string): Set<string> {
  const names = new Set<string>()
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{|\s)/.exec(line)
    if (m !== null) names.add(m[1] as string)
    const family = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) /.exec(line)
    if (family !== null) names.add(family[1] as string)
  }
  return names
}

/** A scripted run: reads, config, a data commit, an allowed and a refused schema commit, an admin call. */
async function scriptedRun (t: Test): Promise<string> {
  const { catalog, meta } = await catalogWithTable(t)
  const proxy = await startProxy(t, { upstream: catalog.url, policy: 'builtin:spec', 'fast-lane': 'on' })
  const call = async (path: string, init?: RequestInit): Promise<number> => {
    const res = await fetch(`${proxy.url}${path}`, init)
    await res.arrayBuffer()
    return res.status
  }
  const post = (body: string): RequestInit => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body })
  t.equal(await call('/v1/config'), 200)
  t.equal(await call(TABLE), 200)
  t.equal(await call(TABLE, post(JSON.stringify({ requirements: [], updates: [{ action: 'set-properties', updates: { owner: 'metrics' } }] }))), 200, 'a data commit')
  const current = await loadMeta(catalog.url, 'db', 't')
  t.equal(await call(TABLE, post(addColumn(current, 'scripted'))), 200, 'an allowed schema commit')
  const narrowed = cloneSchema(meta)
  const id = narrowed.fields.find(f => f.type === 'long')
  if (id !== undefined) id.type = 'int'
  t.equal(await call(TABLE, post(JSON.stringify(clientShapes.java(await loadMeta(catalog.url, 'db', 't'), narrowed, 'db', 't')))), 400, 'a refused one')
  t.equal(await call('/healthz'), 200)
  await proxy.app.decisions.log.flush()
  const res = await fetch(`${proxy.url}/metrics`)
  t.match(res.headers.get('content-type'), /^text\/plain; version=0\.0\.4/)
  return await res.text()
}

/** The text of the scripted run, for promtool's own check below. */
let scraped: string | undefined

t.test('/metrics after a scripted run: default process metrics and iceguard\'s families, in valid exposition format', async t => {
  const text = await scriptedRun(t)
  scraped = text
  const families = parsePrometheusTextFormat(text)
  const byName = new Map(families.map(f => [f.name, f]))
  t.ok(families.length > 20, 'the text parses into metric families')
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('# HELP ') || line.startsWith('# TYPE ')) continue
    // Exposition format 0.0.4: a sample is a name, optional labels, and a float.
    if (!/^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? (-?[0-9.e+-]+|NaN|[+-]Inf)$/.test(line)) {
      t.fail(`not a sample line: ${line}`)
    }
  }
  for (const name of ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'process_open_fds', 'nodejs_heap_size_used_bytes',
    'nodejs_eventloop_lag_p99_seconds', 'nodejs_gc_duration_seconds']) {
    t.ok(byName.has(name), `default metric ${name}`)
  }
  const answers = byName.get('iceguard_answer_duration_seconds')
  t.equal(answers?.type, 'HISTOGRAM')
  // The parser keeps a histogram's buckets but not its labels: those are read from the text.
  const count = (labels: string): number => Number(new RegExp(`^iceguard_answer_duration_seconds_count\\{${labels}\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0)
  for (const kind of ['config', 'load', 'commit', 'gated-commit', 'admin']) t.ok(count(`kind="${kind}",status_class="2xx"`) >= 1, `answers timed as ${kind}`)
  t.ok(count('kind="gated-commit",status_class="4xx"') >= 1, 'by status class: the refusal')
  const judged = Number(/^iceguard_gate_judgement_duration_seconds_count (\d+)$/m.exec(text)?.[1] ?? 0)
  t.ok(judged >= 2, 'both schema commits were judged and timed')
  for (const name of ['iceguard_decision_store_queue_length', 'iceguard_decision_store_oldest_unstored_age_seconds',
    'iceguard_decision_store_flush_failures_total', 'iceguard_policy_reload_failed', 'iceguard_policy_loaded_timestamp_seconds']) {
    t.ok(byName.has(name), name)
  }
  const caches = new Set((byName.get('iceguard_cache_entries')?.metrics ?? []).map(m => (m as { labels?: Record<string, string> }).labels?.cache))
  t.same([...caches].sort(), ['base', 'schema-history', 'schema-texts'], 'every cache is sized')
  t.ok(byName.has('iceguard_cache_evictions_total') && byName.has('iceguard_cache_bytes'))
  for (const name of ['iceguard_http_requests_total', 'iceguard_upstream_request_duration_seconds', 'iceguard_decisions_total', 'iceguard_base_loads_total']) {
    t.ok(byName.has(name), `${name} keeps its name`)
  }
  t.notMatch(text, /table="|namespace="/, 'no table or namespace label')

  t.test('every metric the dashboard and the alert rules use is exposed', async t => {
    const exposed = namesIn(text)
    const files = ['deploy/grafana/iceguard-dashboard.json', 'deploy/prometheus/iceguard-alerts.yaml']
    for (const file of files) {
      const used = new Set(readFileSync(join(root, file), 'utf8').match(/\b(iceguard|process|nodejs)_[a-z0-9_]+/g) ?? [])
      t.ok(used.size > 5, `${file} uses metrics`)
      for (const name of used) t.ok(exposed.has(name), `${file}: ${name} is in /metrics`)
    }
  })
})

t.test('answers are timed by kind on the fast lane and on node:http alike', async t => {
  const { catalog } = await catalogWithTable(t)
  const answers = (text: string, kind: string, cls: string): number =>
    Number(new RegExp(`^iceguard_answer_duration_seconds_count\\{kind="${kind}",status_class="${cls}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0)
  let n = 0
  // One after the other: the counts are the process's, shared by both servers.
  for (const lane of ['on', 'off']) {
    const proxy = await startProxy(t, { upstream: catalog.url, policy: 'builtin:spec', 'fast-lane': lane })
    const scrape = async (): Promise<string> => await (await fetch(`${proxy.url}/metrics`)).text()
    const call = async (path: string, init?: RequestInit): Promise<number> => {
      const res = await fetch(`${proxy.url}${path}`, init)
      await res.arrayBuffer()
      return res.status
    }
    const json = (body: string): RequestInit => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body })
    const before = await scrape()
    t.equal(await call(TABLE), 200)
    t.equal(await call(TABLE, json(JSON.stringify({ requirements: [], updates: [{ action: 'set-properties', updates: { lane } }] }))), 200)
    t.equal(await call(TABLE, json(addColumn(await loadMeta(catalog.url, 'db', 't'), `lane_${lane}_${n++}`))), 200)
    t.equal(await call('/v1/namespaces/db/tables/t/..%2F..%2Fconfig'), 400, 'a target the triage refuses')
    const after = await scrape()
    for (const [kind, cls] of [['load', '2xx'], ['commit', '2xx'], ['gated-commit', '2xx'], ['refused', '4xx'], ['admin', '2xx']] as const) {
      t.ok(answers(after, kind, cls) > answers(before, kind, cls), `fast lane ${lane}: ${kind} ${cls} timed`)
    }
    await proxy.close()
  }
})

/** One unlabelled sample's value in an exposition text. */
function sample (text: string, name: string): number {
  return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1])
}

t.test('the gauges follow what they watch: a decision store that is down, a policy reload that fails', async t => {
  const { catalog, meta } = await catalogWithTable(t)
  const dir = mkdtempSync(join(tmpdir(), 'iceguard-observability-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const policy = join(dir, 'policy.yaml')
  const good = 'version: 1\nextends: builtin:recommended\nmode: enforce\n'
  writeFileSync(policy, good)
  // Nothing listens on port 1: every flush fails and the decisions wait in the buffer.
  const proxy = await startProxy(t, { upstream: catalog.url, policy, 'database-url': 'postgres://nobody@127.0.0.1:1/none', 'fast-lane': 'on' })
  const scrape = async (): Promise<string> => await (await fetch(`${proxy.url}/metrics`)).text()
  const before = await scrape()
  t.equal(sample(before, 'iceguard_decision_store_queue_length'), 0, 'nothing waits at first')
  t.equal(sample(before, 'iceguard_policy_reload_failed'), 0)

  const res = await fetch(`${proxy.url}${TABLE}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: addColumn(meta, 'queued') })
  t.equal(res.status, 200, 'the commit goes through while the store is down')
  await res.arrayBuffer()
  await proxy.app.decisions.log.flush()
  await new Promise(resolve => setTimeout(resolve, 20))
  const down = await scrape()
  t.ok(sample(down, 'iceguard_decision_store_queue_length') >= 1, 'the decision waits in the buffer')
  t.ok(sample(down, 'iceguard_decision_store_oldest_unstored_age_seconds') > 0, 'and its age is shown')
  t.ok(sample(down, 'iceguard_decision_store_flush_failures_total') >= 1, 'the failed flush is counted')

  writeFileSync(policy, 'version: 1\nmode: [not, a, mode]\n')
  t.notOk(proxy.app.policyStore.reload().ok, 'a bad edit is refused')
  t.equal(sample(await scrape(), 'iceguard_policy_reload_failed'), 1, 'and the gauge says so')
  writeFileSync(policy, good)
  t.ok(proxy.app.policyStore.reload().ok)
  const after = await scrape()
  t.equal(sample(after, 'iceguard_policy_reload_failed'), 0, 'until a reload succeeds')
  t.ok(Math.abs(sample(after, 'iceguard_policy_loaded_timestamp_seconds') - Date.now() / 1000) < 60, 'the load time is the reload\'s')
})

const promtool = systemTool(['promtool'], 'apt-get install prometheus')
t.test('promtool accepts the alerting rules, and parses and lints /metrics', { skip: promtool.skip }, async t => {
  const path = promtool.need(t)
  if (path === undefined) return
  const r = spawnSync(path, ['check', 'rules', join(root, 'deploy/prometheus/iceguard-alerts.yaml')], { encoding: 'utf8' })
  t.equal(r.status, 0, `${r.stdout}${r.stderr}`)
  t.match(r.stdout, /SUCCESS: 7 rules found/)
  t.ok(scraped, 'the scripted run scraped /metrics')
  const m = spawnSync(path, ['check', 'metrics'], { input: scraped ?? '', encoding: 'utf8' })
  const said = `${m.stdout}${m.stderr}`
  t.notMatch(said, /parsing error/, 'promtool parses the whole text')
  // prom-client names three of its own gauges `nodejs_active_*_total`, which promtool's lint
  // dislikes; iceguard's own names must pass the lint.
  const problems = said.split('\n').filter(l => l.trim() !== '' && !/^nodejs_active_(handles|requests|resources)_total /.test(l))
  t.same(problems, [], 'no lint problem in iceguard\'s metric names')
})
