/**
 * One break-glass token, every entry point: `POST /admin/v1/validate`, schema changes (dry run and
 * apply), the gate on both transports (a fresh connection the fast lane serves, and one that sent
 * `GET /v1/config` first and belongs to node:http), `iceguard check --override-token` and
 * `iceguard evolve --override-token`. A valid token gives the same verdict everywhere (warn, the
 * waived findings marked `overridden`, the grant named with its reason); an expired, tampered or
 * wrong-table token is refused everywhere with the same message, and nothing reaches the catalog.
 * The audit line of the commit it let through records the token's reason.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import t from 'tap'
import { Client } from 'undici'
import { IcebergRestCatalog } from 'iceberg-js'
import { loggerOptions } from '../../src/main/app.js'
import type { CliIo } from '../../src/cli/cli-io.js'
import { EXIT } from '../../src/cli/exit-codes.js'
import { run } from '../../src/cli/main.js'
import { mintOverride } from '../../src/policy/override-token.js'
import { startCatalog, startProxy, type ProxyOptions } from '../helpers/index.js'
import { onEveryTransport } from '../helpers/transports.js'
import { clientShapes, cloneSchema, createFixtureTable, loadMeta, postJson, posts, type Meta } from '../helpers/gate-fixtures.js'

const SECRET = 'override-everywhere-secret-0123'
const REASON = 'incident 4711: drop the leaked column now'

async function cli (cwd: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number, out: string, err: string }> {
  let out = ''
  let err = ''
  const io: CliIo = { stdout: (s) => { out += s }, stderr: (s) => { err += s }, env, cwd }
  const code = await run(args, io)
  return { code, out, err }
}

/** A commit on a connection of its own: `viaConfig` sends `GET /v1/config` on it first (the handover to node:http). */
async function commitOn (url: string, path: string, body: unknown, token: string, viaConfig: boolean): Promise<{ status: number, json: Record<string, unknown> }> {
  const client = new Client(url, { pipelining: 1 })
  try {
    if (viaConfig) {
      const config = await client.request({ method: 'GET', path: '/v1/config' })
      await config.body.text()
      if (config.statusCode !== 200) throw new Error(`GET /v1/config answered ${config.statusCode}`)
    }
    const res = await client.request({
      method: 'POST',
      path,
      headers: { 'content-type': 'application/json', 'x-iceguard-override': token },
      body: JSON.stringify(body)
    })
    return { status: res.statusCode, json: JSON.parse(await res.body.text()) as Record<string, unknown> }
  } finally {
    await client.close()
  }
}

function without (meta: Meta, name: string): ReturnType<typeof cloneSchema> {
  const s = cloneSchema(meta)
  s.fields = s.fields.filter(f => f.name !== name)
  return s
}

onEveryTransport(t, t => {
  t.test('one token, one verdict, one refusal: validate, schema changes, the gate on both transports, the CLI', async t => {
    const dir = t.testdir({
      'policy.yaml': 'version: 1\nextends: builtin:spec\nnamespaces:\n  strict:\n    rules:\n      COLUMN_NO_DROP: error\n'
    })
    const lines: string[] = []
    const stream = new Writable({ write (chunk: Buffer, _e, cb) { lines.push(...chunk.toString('utf8').split('\n').filter(l => l !== '')); cb() } })
    const audits = (): Array<Record<string, unknown>> => lines.map(l => JSON.parse(l) as { component?: string, audit?: Record<string, unknown> })
      .filter(l => l.component === 'audit' && l.audit !== undefined).map(l => l.audit as Record<string, unknown>)

    const catalog = await startCatalog(t)
    const proxy = await startProxy(t, {
      upstream: catalog.url,
      policy: join(dir, 'policy.yaml'),
      env: { ICEGUARD_OVERRIDE_SECRET: SECRET },
      app: { logger: { ...loggerOptions({ logLevel: 'info' }) as object, stream } }
    } as unknown as ProxyOptions)
    const ice = new IcebergRestCatalog({ baseUrl: catalog.url })
    await ice.createNamespace({ namespace: ['strict'] })
    await createFixtureTable(ice, 't', 2, 'strict')
    const env = { ICEGUARD_OVERRIDE_SECRET: SECRET }

    const good = mintOverride({ table: 'strict.t', rules: ['COLUMN_NO_DROP'], ttlSeconds: 600, reason: REASON, secret: SECRET })
    const bad = {
      expired: mintOverride({ table: 'strict.t', rules: ['COLUMN_NO_DROP'], ttlSeconds: 1, reason: 'old', secret: SECRET, now: new Date(Date.now() - 3_600_000) }),
      tampered: (() => {
        const [p, payload, mac] = good.split('.') as [string, string, string]
        const forged = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { rules: string[] }
        forged.rules = ['COLUMN_NO_DROP', 'TYPE_PROMOTION_VALID']
        return `${p}.${Buffer.from(JSON.stringify(forged)).toString('base64url')}.${mac}`
      })(),
      otherTable: mintOverride({ table: 'strict.other', rules: ['COLUMN_NO_DROP'], ttlSeconds: 600, reason: 'x', secret: SECRET })
    }

    const meta = await loadMeta(proxy.url, 'strict', 't')
    const dropPrice = clientShapes.java(meta, without(meta, 'price'), 'strict', 't')
    writeFileSync(join(dir, 'drop-price.json'), JSON.stringify(dropPrice))
    const validate = async (token?: string) => await postJson(`${proxy.url}/admin/v1/validate`,
      { table: { namespace: ['strict'], name: 't' }, request: dropPrice }, token === undefined ? {} : { 'x-iceguard-override': token })
    const changes = async (column: string, dryRun: boolean, token?: string) => await postJson(
    `${proxy.url}/admin/v1/namespaces/strict/tables/t/schema-changes${dryRun ? '?dry-run=true' : ''}`,
    { changes: [{ op: 'delete-column', path: column }] }, token === undefined ? {} : { 'x-iceguard-override': token })
    const check = async (token: string) => await cli(dir, ['check', '--url', proxy.url, '--table', 'strict.t', '--request', 'drop-price.json',
      '--policy', 'policy.yaml', '--format', 'json', '--override-token', token], env)
    const evolve = async (column: string, token: string, ...more: string[]) => await cli(dir, ['evolve', '--url', proxy.url, '--table', 'strict.t',
      '--delete-column', column, '--format', 'json', '--override-token', token, ...more], env)

    await t.test('without a token every entry point denies', async t => {
      t.equal(((await validate()).json as { verdict: string }).verdict, 'deny')
      t.equal(((await changes('price', true)).json as { verdict: string }).verdict, 'deny')
    })

    await t.test('a valid token: the same verdict, findings and grant everywhere', async t => {
      const postsBefore = posts(catalog).length
      const expectedOverride = { table: 'strict.t', rules: ['COLUMN_NO_DROP'], reason: REASON, id: String, 'expires-at': String }
      const expectedFinding = { rule: 'COLUMN_NO_DROP', severity: 'warn', overridden: true, path: 'price' }

      const v = await validate(good)
      t.equal(v.status, 200)
      t.match(v.json, { verdict: 'warn', override: expectedOverride, findings: [expectedFinding] }, 'validate')
      const overrideId = (v.json as { override: { id: string } }).override.id

      const dry = await changes('price', true, good)
      t.equal(dry.status, 200)
      t.match(dry.json, { committed: false, 'dry-run': true, verdict: 'warn', override: { ...expectedOverride, id: overrideId }, findings: [expectedFinding] }, 'schema-changes dry run')

      const checked = await check(good)
      t.equal(checked.code, EXIT.OK, checked.err)
      t.match(JSON.parse(checked.out), { verdict: 'warn', override: { ...expectedOverride, id: overrideId }, findings: [expectedFinding] }, 'iceguard check --override-token')

      const evolveDry = await evolve('price', good, '--dry-run')
      t.equal(evolveDry.code, EXIT.OK, evolveDry.err)
      t.match(JSON.parse(evolveDry.out), { committed: false, verdict: 'warn', override: { id: overrideId }, findings: [expectedFinding] }, 'iceguard evolve --dry-run --override-token')
      t.equal(posts(catalog).length, postsBefore, 'dry runs sent nothing')

      // Real commits, one per entry point, each dropping its own column with the same token.
      const applied = await changes('price', false, good)
      t.equal(applied.status, 200, applied.text)
      t.match(applied.json, { committed: true, verdict: 'warn', override: { id: overrideId }, findings: [expectedFinding] }, 'schema-changes apply: committed with the override, never "deny"')
      let audit = audits().at(-1)!
      t.match(audit, { verdict: 'warn', overrideId, overrideRules: ['COLUMN_NO_DROP'], overrideReason: REASON, forwarded: true }, 'the audit line records the reason')

      const evolved = await evolve('qty', good)
      t.equal(evolved.code, EXIT.OK, evolved.err)
      t.match(JSON.parse(evolved.out), { committed: true, verdict: 'warn', findings: [{ ...expectedFinding, path: 'qty' }] }, 'iceguard evolve --override-token commits')
      t.match(audits().at(-1), { verdict: 'warn', overrideReason: REASON })

      for (const [transport, viaConfig, column] of [['fast lane', false, 'tags'], ['node:http', true, 'attrs']] as const) {
        const current = await loadMeta(proxy.url, 'strict', 't')
        const before = posts(catalog).length
        const res = await commitOn(proxy.url, '/v1/namespaces/strict/tables/t', clientShapes.java(current, without(current, column), 'strict', 't'), good, viaConfig)
        t.equal(res.status, 200, `${transport}: the commit goes through (${JSON.stringify(res.json)})`)
        t.equal(posts(catalog).length, before + 1, `${transport}: forwarded once`)
        t.equal(posts(catalog).at(-1)!.headers['x-iceguard-override'], undefined, `${transport}: the token never travels upstream`)
        audit = audits().at(-1)!
        t.match(audit, { verdict: 'warn', overrideId, overrideReason: REASON, warnings: ['COLUMN_NO_DROP'] }, `${transport}: audit line with the reason`)
      }
    })

    await t.test('a token that does not verify: the same refusal everywhere, nothing committed', async t => {
      const current = await loadMeta(proxy.url, 'strict', 't')
      const commitBody = clientShapes.java(current, without(current, 'address'), 'strict', 't')
      for (const [what, token, pattern] of [
        ['expired', bad.expired, /expired at/],
        ['tampered', bad.tampered, /signature does not match/],
        ['for another table', bad.otherTable, /is for table strict\.other, not strict\.t/]
      ] as const) {
        const before = posts(catalog).length
        const messages = new Map<string, string>()
        const errorOf = (json: unknown): string => (json as { error: { message: string, type: string, code: number } }).error.message
        const v = await validate(token)
        t.equal(v.status, 400, `${what}: validate 400`)
        messages.set('validate', errorOf(v.json))
        for (const dryRun of [true, false]) {
          const c = await changes('address', dryRun, token)
          t.equal(c.status, 400, `${what}: schema-changes${dryRun ? ' dry run' : ''} 400`)
          messages.set(`schema-changes${dryRun ? ' dry run' : ''}`, errorOf(c.json))
        }
        for (const [transport, viaConfig] of [['fast lane', false], ['node:http', true]] as const) {
          const g = await commitOn(proxy.url, '/v1/namespaces/strict/tables/t', commitBody, token, viaConfig)
          t.equal(g.status, 400, `${what}: the gate (${transport}) 400`)
          t.match(g.json, { error: { type: 'BadRequestException', code: 400 } })
          messages.set(`gate ${transport}`, errorOf(g.json))
        }
        const checked = await check(token)
        t.equal(checked.code, EXIT.DENY, `${what}: check exits 1`)
        messages.set('check', checked.err.replace(/^iceguard: BadRequestException: /, '').trim())
        const evolved = await evolve('address', token)
        t.equal(evolved.code, EXIT.DENY, `${what}: evolve exits 1`)
        messages.set('evolve', evolved.err.replace(/^iceguard: BadRequestException: /, '').trim())

        const first = messages.get('validate')!
        t.match(first, /^Cannot apply x-iceguard-override: /)
        t.match(first, pattern)
        for (const [where, message] of messages) t.equal(message, first, `${what}: ${where} says exactly what validate says`)
        t.equal(posts(catalog).length, before, `${what}: nothing reached the catalog`)
      }
    })

    await t.test('without a secret the token is refused, not ignored, with the same words', async t => {
      const plain = await startProxy(t, { upstream: catalog.url, policy: join(dir, 'policy.yaml') })
      const v = await postJson(`${plain.url}/admin/v1/validate`, { table: { namespace: ['strict'], name: 't' }, request: dropPrice }, { 'x-iceguard-override': good })
      t.equal(v.status, 400)
      const checked = await cli(dir, ['check', '--url', plain.url, '--table', 'strict.t', '--request', 'drop-price.json', '--override-token', good], {})
      t.equal(checked.code, EXIT.DENY)
      t.equal(checked.err.replace(/^iceguard: BadRequestException: /, '').trim(), (v.json as { error: { message: string } }).error.message)
      t.match(checked.err, /no override secret configured/)
    })
  })
})
