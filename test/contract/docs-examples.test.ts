/**
 * The documentation runs. Every `curl` and `iceguard` command in README.md and docs/*.md (also
 * the `iceguard …` inside a `docker run`) is executed against a real iceguard on 127.0.0.1 port 0
 * in front of the embedded catalog, holding the tables the examples name: `curl` is interpreted
 * here (method, headers, body, URL; no curl binary needed) and its JSON answer validated against
 * the OpenAPI document's schema for that route and status; the CLI runs in-process from a
 * workspace holding the files the examples name. A synopsis line (`[--flag]`, `…`, placeholders)
 * is not run: each flag it shows must be one its command accepts. Every ```json block is preceded
 * by `<!-- openapi: Component -->` and must validate against that component (or says `none` and
 * why).
 */
import { cpSync, readdirSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { request } from 'undici'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { IcebergRestCatalog } from 'iceberg-js'
import type { CliIo } from '../../src/cli/cli-io.js'
import { EXIT } from '../../src/cli/exit-codes.js'
import { run } from '../../src/cli/main.js'
import { usage as serverUsage } from '../../src/main/config.js'
import { mintOverride } from '../../src/policy/override-token.js'
import { startCatalog, startProxy } from '../helpers/index.js'
import { loadMeta } from '../helpers/gate-fixtures.js'

const root = new URL('../..', import.meta.url).pathname
const DOCS = ['README.md', ...readdirSync(join(root, 'docs')).filter(f => f.endsWith('.md')).sort().map(f => `docs/${f}`)]
const SECRET = 'docs-examples-override-secret'
const ADMIN_TOKEN = 'playground-admin-token'

interface Block { readonly file: string, readonly line: number, readonly lang: string, readonly body: string, readonly annotation?: string }

function blocks (file: string): Block[] {
  const text = readFileSync(join(root, file), 'utf8')
  const out: Block[] = []
  const re = /^([ \t]*)```(\w*)\n([\s\S]*?)^\1```/gm
  for (const m of text.matchAll(re)) {
    const before = text.slice(0, m.index)
    const annotation = /<!-- openapi: ([^>]*?) -->\s*$/.exec(before)?.[1]
    out.push({ file, line: before.split('\n').length, lang: m[2] as string, body: (m[3] as string).replace(new RegExp(`^${m[1]}`, 'gm'), ''), ...(annotation !== undefined && { annotation }) })
  }
  return out
}

/** Shell words of one command line: quotes, `$VAR`, backslash escapes; stops at an unquoted `|` or `#`. */
function shellWords (line: string, env: Record<string, string>): string[] {
  const words: string[] = []
  let word: string | undefined
  let i = 0
  const push = (s: string): void => { word = (word ?? '') + s }
  const expand = (): string => {
    const m = /^\$(\{(\w+)\}|(\w+))/.exec(line.slice(i))
    if (m === null) { i++; return '$' }
    i += m[0].length
    return env[(m[2] ?? m[3]) as string] ?? ''
  }
  while (i < line.length) {
    const c = line[i] as string
    if (c === ' ' || c === '\t' || c === '\n') { if (word !== undefined) { words.push(word); word = undefined } i++; continue }
    if ((c === '|' || c === '#') && word === undefined) break
    if (c === "'") {
      const end = line.indexOf("'", i + 1)
      if (end < 0) throw new Error(`unclosed quote in: ${line}`)
      push(line.slice(i + 1, end)); i = end + 1; continue
    }
    if (c === '"') {
      i++
      let s = ''
      while (i < line.length && line[i] !== '"') {
        if (line[i] === '\\' && i + 1 < line.length) { s += line[i + 1]; i += 2 } else if (line[i] === '$') s += expand(); else { s += line[i]; i++ }
      }
      push(s); i++; continue
    }
    if (c === '$') { push(expand()); continue }
    if (c === '\\') { push(line[i + 1] ?? ''); i += 2; continue }
    push(c); i++
  }
  if (word !== undefined) words.push(word)
  return words
}

/** The commands of a shell block: continuation lines joined, comments and blank lines dropped. */
function commands (body: string): string[] {
  const out: string[] = []
  let current = ''
  let quote: string | undefined
  const text = body.replace(/\\\n/g, ' ')
  for (const c of text) {
    if (quote !== undefined) { if (c === quote) quote = undefined } else if (c === "'" || c === '"') quote = c
    else if (c === '\n') { out.push(current); current = ''; continue }
    current += c
  }
  out.push(current)
  return out.map(l => l.trim()).filter(l => l !== '' && !l.startsWith('#'))
}

/** A line written as a synopsis: optional parts, alternatives, ellipses or placeholders. */
function isSynopsis (line: string): boolean {
  return /\[|…|\(--| \| |\bURL\b|\bRULE_ID\b|\bns\.name\b|<[a-z][a-z-]*>/.test(line)
}

const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: false })
const openapi = JSON.parse(readFileSync(join(root, 'openapi/iceguard.openapi.json'), 'utf8')) as {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>>
  components: { schemas: Record<string, unknown> }
}
ajv.addSchema({ $id: 'https://iceguard.invalid/openapi.json', components: openapi.components }, undefined, undefined, false)
function validator (schema: unknown): (value: unknown) => string | undefined {
  const validate = ajv.compile({ $id: `https://iceguard.invalid/check-${Math.random()}`, ...(schema as object), components: openapi.components })
  return (value) => validate(value) ? undefined : ajv.errorsText(validate.errors)
}
function componentValidator (name: string): (value: unknown) => string | undefined {
  if (openapi.components.schemas[name] === undefined) return () => `no component ${name} in the OpenAPI document`
  return validator({ $ref: `#/components/schemas/${name}` })
}

/** The OpenAPI response schema for a request, when the document describes the route. */
function responseSchema (method: string, path: string, status: number): unknown {
  for (const [template, ops] of Object.entries(openapi.paths)) {
    const re = new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+').replace(/\{[^}]+\}/g, '[^/]+')}$`)
    if (!re.test(path)) continue
    const op = ops[method.toLowerCase()]
    return op?.responses[String(status)]?.content?.['application/json']?.schema
  }
  return undefined
}

t.test('the documentation\'s examples run against a real iceguard', async t => {
  const workspace = t.testdir({})
  const catalog = await startCatalog(t)
  // The workspace an example's relative paths resolve in, as a CI job's checkout would be.
  cpSync(join(root, 'examples'), workspace, { recursive: true })
  const ice = new IcebergRestCatalog({ baseUrl: catalog.url })
  await ice.createNamespace({ namespace: ['db'] })
  await ice.createTable({ namespace: ['db'] }, {
    name: 'orders',
    schema: {
      type: 'struct',
      fields: [
        { id: 1, name: 'id', required: true, type: 'long' },
        { id: 2, name: 'customer', required: false, type: 'string' },
        { id: 3, name: 'quantity', required: false, type: 'int' },
        { id: 4, name: 'qty', required: false, type: 'int' },
        { id: 5, name: 'amount', required: false, type: 'decimal(10, 2)' },
        { id: 6, name: 'price', required: false, type: 'decimal(10, 2)' }
      ]
    } as never
  })
  await ice.createTable({ namespace: ['db'] }, {
    name: 'events',
    schema: {
      type: 'struct',
      fields: [
        { id: 1, name: 'id', required: false, type: 'long' },
        { id: 2, name: 'ts', required: false, type: 'timestamptz' },
        { id: 3, name: 'payload', required: false, type: 'string' }
      ]
    } as never
  })
  // The playground's table is at schema 1 (a country column added from Spark) when its curl runs.
  const evolved = await request(`${catalog.url}/v1/namespaces/db/tables/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      requirements: [{ type: 'assert-current-schema-id', 'current-schema-id': 0 }],
      updates: [
        {
          action: 'add-schema',
          schema: {
            type: 'struct',
            'schema-id': 1,
            fields: [
              { id: 1, name: 'id', required: false, type: 'long' }, { id: 2, name: 'ts', required: false, type: 'timestamptz' },
              { id: 3, name: 'payload', required: false, type: 'string' }, { id: 4, name: 'country', required: false, type: 'string', doc: 'ISO 3166 country code' }]
          }
        },
        { action: 'set-current-schema', 'schema-id': -1 }
      ]
    })
  })
  t.equal(evolved.statusCode, 200, `db.events is at schema 1 (${evolved.statusCode})`)
  await evolved.body.text()
  const server = await startProxy(t, {
    upstream: catalog.url,
    policy: join(workspace, 'policy.yaml'),
    env: { ICEGUARD_ADMIN_TOKEN: ADMIN_TOKEN, ICEGUARD_OVERRIDE_SECRET: SECRET }
  })
  const orders = await loadMeta(server.url, 'db', 'orders')
  const addNote = {
    requirements: [{ type: 'assert-current-schema-id', 'current-schema-id': 0 }],
    updates: [
      { action: 'add-schema', schema: { type: 'struct', 'schema-id': 1, fields: [...orders.schemas[0]!.fields, { id: 7, name: 'note', required: false, type: 'string' }] } },
      { action: 'set-current-schema', 'schema-id': -1 }
    ]
  }
  for (const dir of ['changes', 'prod', 'schema-changes']) mkdirSync(join(workspace, dir), { recursive: true })
  writeFileSync(join(workspace, 'changes/orders.json'), JSON.stringify(addNote, null, 2))
  writeFileSync(join(workspace, 'schema-changes/orders-note.json'), JSON.stringify({ identifier: { namespace: ['db'], name: 'orders' }, ...addNote }, null, 2))
  writeFileSync(join(workspace, 'prod/orders.json'), JSON.stringify({ metadata: orders }))
  writeFileSync(join(workspace, 'changes.json'), JSON.stringify([{ op: 'add-column', name: 'shipped_at', type: 'timestamptz' }]))
  writeFileSync(join(workspace, 'orders.yaml'), 'columns:\n  - { name: id, type: long, required: true }\n  - { name: shipped_at, type: timestamptz }\n  - { name: region, type: string }\nstrict: false\n')
  const env: Record<string, string> = {
    TOKEN: mintOverride({ table: 'db.orders', rules: ['COLUMN_NO_DROP'], ttlSeconds: 3600, reason: 'docs example', secret: SECRET }),
    PWD: workspace,
    ICEGUARD_TOKEN: 'docs-example-bearer'
  }
  const localize = (word: string): string => word
    .replace(/^(https?:\/\/)?localhost:8181/, server.url)
    .replace(/^https:\/\/iceguard\.example\.com\/?/, server.url)

  let ran = 0
  for (const file of DOCS) {
    for (const block of blocks(file)) {
      const where = `${file}:${block.line}`
      if (block.lang === 'json') {
        t.ok(block.annotation !== undefined, `${where}: a JSON example names its OpenAPI component (<!-- openapi: Name -->)`)
        if (block.annotation === undefined || block.annotation.startsWith('none')) continue
        let value: unknown
        try {
          value = JSON.parse(block.body)
        } catch (err) {
          t.fail(`${where}: the JSON example parses (${(err as Error).message})`)
          continue
        }
        t.equal(componentValidator(block.annotation)(value), undefined, `${where}: valid ${block.annotation}`)
        continue
      }
      if (!['sh', 'bash', 'shell', ''].includes(block.lang)) continue
      for (const line of commands(block.body)) {
        let words = shellWords(line, env)
        const docker = words[0] === 'docker' && words[1] === 'run' ? words.indexOf('iceguard', 2) : -1
        if (docker > 0) words = words.slice(docker)
        if (words[0] === 'npx' && words[1] === '--no-install' && words[2] === 'iceguard') words = words.slice(2)
        if (words[0] === 'iceguard') {
          if (isSynopsis(line)) {
            const command = words[1] === 'serve' ? 'serve' : words[1] as string
            const help = command === 'serve' ? serverUsage() : (await cli(['help'])).out + (await cli([command, '--help'])).out
            for (const flag of words.filter(w => /^--[a-z]/.test(w)).map(w => w.split('=')[0] as string)) {
              t.match(help, new RegExp(`${flag}\\b`), `${where}: iceguard ${command} accepts ${flag}`)
            }
            continue
          }
          const result = await cli(words.slice(1).map(localize))
          ran++
          t.equal(result.code, EXIT.OK, `${where}: ${line.slice(0, 100)} runs (exit ${result.code}) ${result.err.slice(0, 300)}`)
          continue
        }
        if (words[0] !== 'curl') continue
        ran++
        const call = curl(words.slice(1).map(localize))
        const res = await request(call.url, { method: call.method, headers: call.headers, ...(call.body !== undefined && { body: call.body }) })
        const text = await res.body.text()
        t.ok(res.statusCode < 500, `${where}: ${call.method} ${call.url} answers ${res.statusCode}`)
        const path = new URL(call.url).pathname
        const schema = responseSchema(call.method, path, res.statusCode)
        if (schema !== undefined) {
          t.equal(validator(schema)(JSON.parse(text)), undefined, `${where}: the ${res.statusCode} answer matches the OpenAPI document`)
        } else if (path.startsWith('/admin/')) {
          t.fail(`${where}: the OpenAPI document describes ${call.method} ${path} ${res.statusCode}`)
        }
      }
    }
  }
  t.ok(ran >= 10, `${ran} examples ran`)

  async function cli (args: string[]): Promise<{ code: number, out: string, err: string }> {
    let out = ''
    let err = ''
    const io: CliIo = { stdout: (s) => { out += s }, stderr: (s) => { err += s }, env: { ICEGUARD_OVERRIDE_SECRET: SECRET, ICEGUARD_TOKEN: env.ICEGUARD_TOKEN, ICEGUARD_ADMIN_TOKEN: ADMIN_TOKEN }, cwd: workspace }
    return { code: await run(args, io), out, err }
  }
})

/** What curl would send for these arguments (the options the docs use). */
function curl (args: string[]): { method: string, url: string, headers: Record<string, string>, body?: string } {
  let method: string | undefined
  let url: string | undefined
  let body: string | undefined
  const headers: Record<string, string> = {}
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string
    if (a === '-s' || a === '-i' || a === '-S' || a === '-f' || a === '-sS') continue
    if (a === '-X') { method = args[++i]; continue }
    if (a === '-H') {
      const h = args[++i] as string
      const colon = h.indexOf(':')
      headers[h.slice(0, colon).trim().toLowerCase()] = h.slice(colon + 1).trim()
      continue
    }
    if (a === '-d' || a === '--data' || a === '--data-raw') { body = args[++i]; continue }
    if (a.startsWith('-')) throw new Error(`curl option ${a} is not interpreted by this test; add it`)
    url = /^https?:\/\//.test(a) ? a : `http://${a}`
  }
  if (url === undefined) throw new Error(`no URL in curl ${args.join(' ')}`)
  if (body !== undefined && headers['content-type'] === undefined) headers['content-type'] = 'application/x-www-form-urlencoded'
  return { method: method ?? (body !== undefined ? 'POST' : 'GET'), url, headers, ...(body !== undefined && { body }) }
}
