/**
 * What a platform engineer meets on a first day, each item seen once going wrong: the start line
 * names the upstream (without its credentials) and the policy; SIGTERM is logged; a port in use
 * is one line and a non-zero exit; a short override secret is refused at start by name;
 * `override` mints only for rules that exist; an unknown schema-change `op` names the known ones;
 * `/docs` and `/openapi.*` are not counted as Iceberg calls; a denied commit's warnings are
 * counted as warnings and kept in its audit line; refusals link to `GET /rules/{RULE_ID}`, served
 * here from docs/rules.md; and docs/policy.md's effective-policy example is the real answer.
 */
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import net, { type AddressInfo } from 'node:net'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import t, { type Test } from 'tap'
import { Client } from 'undici'
import { IcebergRestCatalog } from 'iceberg-js'
import { loggerOptions } from '../../src/main/app.js'
import type { CliIo } from '../../src/cli/cli-io.js'
import { EXIT } from '../../src/cli/exit-codes.js'
import { run } from '../../src/cli/main.js'
import { ConfigError, loadConfig } from '../../src/main/config.js'
import { metrics } from '../../src/metrics/iceguard-metrics.js'
import { startCatalog, startProxy, type ProxyOptions } from '../helpers/index.js'
import { clientShapes, cloneSchema, createFixtureTable, loadMeta, postJson } from '../helpers/gate-fixtures.js'

const root = new URL('../..', import.meta.url).pathname

/** Runs src/main/server.ts; resolves with its output once `until` matches stdout, or when it exits. */
function serverProcess (t: Test, args: string[], env: NodeJS.ProcessEnv = {}) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main/server.ts', '--host', '127.0.0.1', ...args], {
    cwd: root,
    env: { ...process.env, ICEGUARD_UPSTREAM_URL: '', ICEGUARD_OVERRIDE_SECRET: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  t.teardown(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL') })
  let out = ''
  let err = ''
  child.stdout.on('data', (c: Buffer) => { out += c.toString() })
  child.stderr.on('data', (c: Buffer) => { err += c.toString() })
  const exited = new Promise<number | null>(resolve => child.on('exit', code => resolve(code)))
  const waitFor = async (pattern: RegExp): Promise<RegExpExecArray> => await new Promise((resolve, reject) => {
    const check = (): void => {
      const m = pattern.exec(out)
      if (m !== null) { child.stdout.off('data', check); resolve(m) }
    }
    child.stdout.on('data', check)
    void exited.then(code => reject(new Error(`exited ${code} before ${pattern}: ${out}${err}`)))
    check()
  })
  return { child, exited, waitFor, out: () => out, err: () => err }
}

async function cli (args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number, out: string, err: string }> {
  let out = ''
  let err = ''
  const io: CliIo = { stdout: (s) => { out += s }, stderr: (s) => { err += s }, env, cwd: root }
  const code = await run(args, io)
  return { code, out, err }
}

async function counter (name: string, labels: Record<string, string>): Promise<number> {
  const text = await metrics.registry.metrics()
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`)
  let total = 0
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue
    const [series, value] = line.split(/ (?=[^ ]+$)/) as [string, string]
    if (want.every(l => series.includes(l))) total += Number(value)
  }
  return total
}

t.test('the start line names the upstream without credentials and the policy; SIGTERM is logged', async t => {
  const catalog = await startCatalog(t)
  // Credentials never get that far: the configuration refuses an upstream URL that carries them.
  const refused = serverProcess(t, ['--port', '0', '--upstream', catalog.url.replace('http://', 'http://alice:pa55word@')])
  t.equal(await refused.exited, 2)
  t.notMatch(refused.out(), /pa55word/)
  const server = serverProcess(t, ['--port', '0', '--upstream', `${catalog.url}/`, '--policy', 'examples/policy.yaml'])
  const started = await server.waitFor(/"msg":"iceguard serving on [^"]*"/)
  t.match(started[0], `upstream ${catalog.url}/, policy examples/policy.yaml`, 'the upstream, as configured, and the policy source')
  server.child.kill('SIGTERM')
  await server.waitFor(/"signal":"SIGTERM"[^\n]*SIGTERM received: closing/)
  t.equal(await server.exited, 0, 'a graceful exit')
  t.match(server.out(), /"msg":"closed"/)

  const embedded = serverProcess(t, ['--port', '0', '--memory'])
  const line = await embedded.waitFor(/"msg":"iceguard serving on [^"]*"/)
  t.match(line[0], /upstream http:\/\/127\.0\.0\.1:\d+\/ \(embedded development catalog\), policy builtin:recommended/)
  embedded.child.kill('SIGTERM')
  t.equal(await embedded.exited, 0)
})

t.test('a port in use: one clear line, no stack trace, exit 2', async t => {
  const holder = net.createServer()
  await new Promise<void>(resolve => holder.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>(resolve => holder.close(() => resolve())))
  const port = (holder.address() as AddressInfo).port
  const server = serverProcess(t, ['--port', String(port), '--memory'])
  t.equal(await server.exited, 2)
  const lines = server.err().trim().split('\n')
  t.equal(lines.length, 1, `one line: ${server.err()}`)
  t.match(lines[0], `iceguard: Cannot listen on 127.0.0.1:${port}: the port is already in use (EADDRINUSE); choose another with --port/ICEGUARD_PORT`)
  t.notMatch(server.err() + server.out(), /\n\s+at /, 'no stack trace')
})

t.test('a too-short override secret is refused at start, by name', async t => {
  t.throws(() => loadConfig([], { ICEGUARD_OVERRIDE_SECRET: 'short' }), ConfigError)
  try {
    loadConfig([], { ICEGUARD_OVERRIDE_SECRET: 'short' })
  } catch (err) {
    t.match((err as Error).message, /ICEGUARD_OVERRIDE_SECRET: must be at least 16 characters .*got 5/)
  }
  t.equal(loadConfig([], { ICEGUARD_OVERRIDE_SECRET: '0123456789abcdef' }).overrideSecret, '0123456789abcdef', '16 characters start')
  const server = serverProcess(t, ['--port', '0', '--memory'], { ICEGUARD_OVERRIDE_SECRET: 'short' })
  t.equal(await server.exited, 2, 'the server does not start')
  t.match(server.err(), /ICEGUARD_OVERRIDE_SECRET: must be at least 16 characters/)
})

t.test('override mints only for rule ids a token can waive', async t => {
  const env = { ICEGUARD_OVERRIDE_SECRET: '0123456789abcdef-override' }
  const mint = async (...rules: string[]) => await cli(['override', '--table', 'db.orders', ...rules.flatMap(r => ['--rule', r]), '--ttl', '1h', '--reason', 'test'], env)
  const typo = await mint('COLUMN_NO_DORP')
  t.equal(typo.code, EXIT.USAGE)
  t.match(typo.err, /Cannot mint override: unknown rule id "COLUMN_NO_DORP" \(did you mean COLUMN_NO_DROP\?\)/)
  t.equal(typo.out, '', 'no token printed')
  const mixed = await mint('COLUMN_NO_DROP', 'NOT_A_RULE')
  t.equal(mixed.code, EXIT.USAGE, 'one unknown id among known ones is still refused')
  t.match((await mint('TABLE_FROZEN')).err, /TABLE_FROZEN is the freeze mode, not a rule finding/)
  t.match((await mint('TABLE_NO_REGISTER')).err, /TABLE_NO_REGISTER is a permission/)
  const ok = await mint('COLUMN_NO_DROP')
  t.equal(ok.code, EXIT.OK)
  t.match(ok.out, /^igo1\.[\w-]+\.[\w-]+\n$/)
})

t.test('an unknown schema-change op names the known ones', async t => {
  const proxy = await startProxy(t, { upstream: 'http://127.0.0.1:9' })
  const res = await postJson(`${proxy.url}/admin/v1/namespaces/db/tables/t/schema-changes?dry-run=true`, { changes: [{ op: 'add-colum', name: 'x', type: 'int' }] })
  t.equal(res.status, 400)
  const message = (res.json as { error: { message: string } }).error.message
  t.match(message, /^Invalid request: body\.changes\[0\]\.op must be one of "add-column", "add-nested-column", "rename-column", /)
  t.match(message, /"union-by-name", "ensure-column", "ensure-rename"$/)
})

t.test('the API document and its UI are counted as iceguard routes, not Iceberg calls', async t => {
  const proxy = await startProxy(t, { upstream: 'http://127.0.0.1:9' })
  const before = {
    docs: (await counter('iceguard_http_requests_total', { route: '/docs/*', method: 'GET' })),
    json: (await counter('iceguard_http_requests_total', { route: '/openapi.json', method: 'GET' })),
    yaml: (await counter('iceguard_http_requests_total', { route: '/openapi.yaml', method: 'GET' })),
    iceberg: (await counter('iceguard_http_requests_total', { route: 'iceberg:local' })) + (await counter('iceguard_http_requests_total', { route: 'iceberg:passthrough' }))
  }
  for (const path of ['/docs', '/docs/static/index.css', '/openapi.json', '/openapi.yaml']) {
    const res = await fetch(proxy.url + path, { redirect: 'manual' })
    await res.arrayBuffer()
    t.ok(res.status < 500, `${path}: ${res.status}`)
  }
  t.equal((await counter('iceguard_http_requests_total', { route: '/docs/*', method: 'GET' })) - before.docs, 2, '/docs and its assets')
  t.equal((await counter('iceguard_http_requests_total', { route: '/openapi.json', method: 'GET' })) - before.json, 1)
  t.equal((await counter('iceguard_http_requests_total', { route: '/openapi.yaml', method: 'GET' })) - before.yaml, 1)
  t.equal((await counter('iceguard_http_requests_total', { route: 'iceberg:local' })) + (await counter('iceguard_http_requests_total', { route: 'iceberg:passthrough' })), before.iceberg, 'no Iceberg label')
})

t.test('a denied commit: its warnings are counted as warnings and kept in its audit line; the refusal links to the rule page', async t => {
  const dir = t.testdir({ 'policy.yaml': 'version: 1\nextends: builtin:recommended\nrules:\n  COLUMN_NO_DROP: error\n  COLUMN_DOC_REQUIRED: warn\n' })
  const lines: string[] = []
  const stream = new Writable({ write (chunk: Buffer, _e, cb) { lines.push(...chunk.toString('utf8').split('\n').filter(l => l !== '')); cb() } })
  const catalog = await startCatalog(t)
  const proxy = await startProxy(t, {
    upstream: catalog.url,
    policy: join(dir, 'policy.yaml'),
    app: { logger: { ...loggerOptions({ logLevel: 'info' }) as object, stream } }
  } as unknown as ProxyOptions)
  const ice = new IcebergRestCatalog({ baseUrl: catalog.url })
  await ice.createNamespace({ namespace: ['db'] })
  await createFixtureTable(ice, 't', 2)
  const meta = await loadMeta(proxy.url, 'db', 't')
  const schema = cloneSchema(meta)
  schema.fields = schema.fields.filter(f => f.name !== 'price')
  schema.fields.push({ id: meta['last-column-id'] + 1, name: 'undocumented', required: false, type: 'string' })
  const body = JSON.stringify(clientShapes.java(meta, schema, 'db', 't'))

  const warnBefore = (await counter('iceguard_findings_total', { rule: 'COLUMN_DOC_REQUIRED', severity: 'warn', source: 'commit' }))
  const errorBefore = (await counter('iceguard_findings_total', { rule: 'COLUMN_DOC_REQUIRED', severity: 'error', source: 'commit' }))
  const dropBefore = (await counter('iceguard_findings_total', { rule: 'COLUMN_NO_DROP', severity: 'error', source: 'commit' }))
  // A fresh connection (served by the fast lane) and one that asked for /v1/config first (node:http).
  for (const [transport, viaConfig] of [['fast lane', false], ['node:http', true]] as const) {
    const client = new Client(proxy.url, { pipelining: 1 })
    t.teardown(() => client.close())
    if (viaConfig) await (await client.request({ method: 'GET', path: '/v1/config' })).body.text()
    const res = await client.request({ method: 'POST', path: '/v1/namespaces/db/tables/t', headers: { 'content-type': 'application/json' }, body })
    const answer = JSON.parse(await res.body.text()) as { error: { message: string } }
    t.equal(res.statusCode, 400, `${transport}: denied`)
    t.match(answer.error.message, `(see ${proxy.url}/rules/COLUMN_NO_DROP)`, `${transport}: the link is to the rule page under the request's own origin`)
    const audit = lines.map(l => JSON.parse(l) as { component?: string, audit?: Record<string, unknown> }).filter(l => l.component === 'audit').at(-1)?.audit
    t.match(audit, { verdict: 'deny', rules: ['COLUMN_NO_DROP', 'COLUMN_DOC_REQUIRED'], warnings: ['COLUMN_DOC_REQUIRED'] }, `${transport}: the audit line keeps the warning`)
  }
  t.equal((await counter('iceguard_findings_total', { rule: 'COLUMN_DOC_REQUIRED', severity: 'warn', source: 'commit' })) - warnBefore, 2, 'counted as warnings')
  t.equal((await counter('iceguard_findings_total', { rule: 'COLUMN_DOC_REQUIRED', severity: 'error', source: 'commit' })) - errorBefore, 0, 'never as errors')
  t.equal((await counter('iceguard_findings_total', { rule: 'COLUMN_NO_DROP', severity: 'error', source: 'commit' })) - dropBefore, 2)

  const behind = await startProxy(t, { upstream: catalog.url, policy: join(dir, 'policy.yaml'), 'public-url': 'https://iceguard.example.com/' })
  const refused = await postJson(`${behind.url}/v1/namespaces/db/tables/t`, body)
  t.match((refused.json as { error: { message: string } }).error.message, '(see https://iceguard.example.com/rules/COLUMN_NO_DROP)', 'under ICEGUARD_PUBLIC_URL when set')
})

t.test('GET /rules/{RULE_ID}: the rule\'s section of docs/rules.md as HTML; 404 for an unknown id', async t => {
  const proxy = await startProxy(t, { upstream: 'http://127.0.0.1:9' })
  const page = await fetch(`${proxy.url}/rules/COLUMN_NO_DROP`)
  t.equal(page.status, 200)
  t.match(page.headers.get('content-type'), /^text\/html/)
  const html = await page.text()
  t.match(html, '<h1><code>COLUMN_NO_DROP</code></h1>')
  t.match(html, /<strong>Why\.<\/strong>/, 'the section\'s text, rendered')
  t.notMatch(html, /### |COLUMN_NO_RENAME<\/code><\/h1>/, 'only its own section')
  const frozen = await fetch(`${proxy.url}/rules/TABLE_FROZEN`)
  t.equal(frozen.status, 200, 'TABLE_FROZEN has its page too')
  await frozen.text()
  for (const id of ['NOT_A_RULE', 'column_no_drop', '%3Cscript%3E']) {
    const missing = await fetch(`${proxy.url}/rules/${id}`)
    t.equal(missing.status, 404, `${id}: 404`)
    const json = await missing.json() as { error: { code: number, type: string, message: string } }
    t.match(json, { error: { code: 404, type: 'NotFoundException', message: /^Cannot show rule .*: no rule has this id/ } })
  }
})

t.test('docs/policy.md: the effective-policy example is the real answer for examples/policy.yaml', async t => {
  const doc = readFileSync(join(root, 'docs/policy.md'), 'utf8')
  const at = doc.indexOf('The **effective policy** of a table')
  const block = /```json\n([\s\S]*?)```/.exec(doc.slice(at))
  t.ok(at >= 0 && block !== null, 'the example is there')
  const example = JSON.parse(block![1]!) as Record<string, unknown> & { rules: Array<{ rule: string }> }
  const proxy = await startProxy(t, { upstream: 'http://127.0.0.1:9', policy: 'examples/policy.yaml' })
  const res = await fetch(`${proxy.url}/admin/v1/policy/effective?table=${String(example.table)}`)
  t.equal(res.status, 200)
  const real = await res.json() as Record<string, unknown> & { rules: Array<{ rule: string }> }
  t.same(Object.keys(example).sort(), Object.keys(real).sort(), 'the same members')
  for (const key of Object.keys(real)) {
    if (key === 'rules') continue
    t.same(example[key], real[key], `${key}: as answered`)
  }
  t.ok(example.rules.length > 0)
  for (const rule of example.rules) t.same(rule, real.rules.find(r => r.rule === rule.rule), `rules: ${rule.rule} as answered`)
  t.match(doc, '[`TABLE_NO_REGISTER`](rules.md#table_no_register)', 'the rule table lists TABLE_NO_REGISTER')
  t.match(doc, '[`TABLE_FROZEN`](rules.md#table_frozen)', 'and TABLE_FROZEN')
  const expiries = [...doc.matchAll(/expires:? *"?(\d{4}-\d{2}-\d{2})/g), ...readFileSync(join(root, 'examples/policy.yaml'), 'utf8').matchAll(/expires: *(\d{4}-\d{2}-\d{2})/g)]
  t.ok(expiries.length >= 2)
  for (const m of expiries) t.ok(m[1]! >= '2090-01-01', `example exception date ${m[1]} is far ahead, not about to lapse`)
})
