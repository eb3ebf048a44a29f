/**
 * Every platform rule end to end over real HTTP: the rule's fixture (test/fixtures/rules/<RULE_ID>/)
 * is registered at the embedded catalog as `db.orders`, iceguard runs in front of it with the
 * fixture's policy, and the fixture's commit is sent through the proxy. Enforced, the commit is
 * refused with a 400 naming the rule and never reaches the catalog; in warn mode it is forwarded
 * with the rule in `x-iceguard-warnings`; a table the rule is not enabled for is untouched.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { isSafeNumber, LosslessNumber, parse as parseLossless, stringify as stringifyLossless } from 'lossless-json'
import t, { type Test } from 'tap'
import { request } from 'undici'
import { parseDocument } from 'yaml'
import { PLATFORM_RULES } from '../../src/engine/rules/platform/index.js'
import { startCatalog, startProxy, type RunningCatalog } from '../helpers/index.js'
import { BIG_ID, postJson, type JsonAnswer } from '../helpers/gate-fixtures.js'
import { onEveryTransport } from '../helpers/transports.js'

const root = new URL('../fixtures/rules/', import.meta.url).pathname
const platformIds = new Set(PLATFORM_RULES.map(r => r.id))
// A rule with `flows: []` judges no commit, so no commit can show it end to end.
const judging = PLATFORM_RULES.filter(r => r.flows === undefined || r.flows.length > 0).map(r => r.id).sort()
const folders = readdirSync(root).filter(d => platformIds.has(d)).sort()

const work = mkdtempSync(join(tmpdir(), 'iceguard-policy-e2e-'))
t.teardown(() => rmSync(work, { recursive: true, force: true }))

let files = 0
/** A fresh file per write: the catalog caches metadata by location. */
function freshPath (name: string): string {
  const dir = join(work, String(files++))
  mkdirSync(dir)
  return join(dir, name)
}

function readJson (path: string): Record<string, unknown> {
  // 64-bit snapshot ids stay exact numbers (3055729675574597004) when written back.
  return parseLossless(readFileSync(path, 'utf8'), null, v => isSafeNumber(v) ? Number(v) : new LosslessNumber(v)) as Record<string, unknown>
}

/** base.json as a metadata file a real catalog accepts: fields a fixture may leave out are filled in. */
function metadataFile (dir: string): string {
  const base = readJson(join(dir, 'base.json'))
  const filled: Record<string, unknown> = {
    location: 's3://warehouse/db/orders',
    'table-uuid': '9c12d441-03fe-4693-9a96-a0705ddf69c1',
    'last-updated-ms': 1700000000000,
    'last-sequence-number': 0,
    'last-partition-id': 999,
    'default-spec-id': 0,
    'partition-specs': [{ 'spec-id': 0, fields: [] }],
    'default-sort-order-id': 0,
    'sort-orders': [{ 'order-id': 0, fields: [] }],
    properties: {},
    snapshots: [],
    ...base
  }
  const path = freshPath('v1.metadata.json')
  writeFileSync(path, stringifyLossless(filled) ?? '')
  return path
}

/**
 * The fixture's policy in a folder of its own, with any contract files it names copied beside it
 * (contract paths are relative to the policy file). `edit` changes the parsed YAML first.
 */
function policyFile (dir: string, edit: (doc: ReturnType<typeof parseDocument>) => void = () => {}): string {
  const doc = parseDocument(readFileSync(join(dir, 'policy.yaml'), 'utf8'))
  edit(doc)
  const path = freshPath('policy.yaml')
  const copyContracts = (node: unknown): void => {
    if (Array.isArray(node)) { node.forEach(copyContracts); return }
    if (typeof node !== 'object' || node === null) return
    for (const [k, v] of Object.entries(node)) {
      if (k === 'contract' && typeof v === 'string') {
        const to = join(dirname(path), v)
        mkdirSync(dirname(to), { recursive: true })
        copyFileSync(join(dir, v), to)
      } else copyContracts(v)
    }
  }
  copyContracts(doc.toJS())
  writeFileSync(path, doc.toString())
  return path
}

const withMode = (mode: string) => (doc: ReturnType<typeof parseDocument>) => { doc.set('mode', mode) }

async function register (catalog: RunningCatalog, ns: string, name: string, metadataLocation: string): Promise<void> {
  const res = await postJson(`${catalog.url}/v1/namespaces/${ns}/register`, { name, 'metadata-location': metadataLocation, overwrite: true })
  if (res.status !== 200) throw new Error(`register ${ns}.${name}: ${res.status} ${res.text}`)
}

/** A createTable request in commit.json has no base to register: it goes to the namespace. */
const isCreate = (commit: Record<string, unknown>): boolean => typeof commit.name === 'string' && commit.schema !== undefined

/** Puts the fixture's base in place as `ns.name` (unless the commit creates it) and sends the commit through the proxy. */
async function send (catalog: RunningCatalog, proxyUrl: string, dir: string, ns: string, name: string): Promise<JsonAnswer> {
  const commitText = readFileSync(join(dir, 'commit.json'), 'utf8')
  const commit = readJson(join(dir, 'commit.json'))
  if (isCreate(commit)) {
    // The table a previous step created goes first (404 when there is none).
    await (await request(`${catalog.url}/v1/namespaces/${ns}/tables/${name}`, { method: 'DELETE' })).body.text()
    const body = stringifyLossless({ ...commit, name }) ?? ''
    catalog.clearRequests()
    return await postJson(`${proxyUrl}/v1/namespaces/${ns}/tables`, body)
  }
  await register(catalog, ns, name, metadataFile(dir))
  await createFixtureView(catalog, proxyUrl, dir, ns)
  catalog.clearRequests()
  // The bytes as the fixture holds them: 64-bit ids travel exactly.
  return await postJson(`${proxyUrl}/v1/namespaces/${ns}/tables/${name}`, commitText)
}

/**
 * A fixture's view.json (a CreateViewRequest reading the table, for rules about views), created
 * through the proxy so that its view index knows it; the one a previous step made goes first.
 */
async function createFixtureView (catalog: RunningCatalog, proxyUrl: string, dir: string, ns: string): Promise<void> {
  const path = join(dir, 'view.json')
  if (!existsSync(path)) return
  const view = readJson(path)
  await (await request(`${catalog.url}/v1/namespaces/${ns}/views/${String(view.name)}`, { method: 'DELETE' })).body.text()
  const version = { ...(view['view-version'] as Record<string, unknown>), 'default-namespace': [ns] }
  const res = await postJson(`${proxyUrl}/v1/namespaces/${ns}/views`, stringifyLossless({ ...view, 'view-version': version }) ?? '')
  if (res.status !== 200) throw new Error(`create view ${ns}.${String(view.name)}: ${res.status} ${res.text}`)
}

const reached = (catalog: RunningCatalog): string[] => catalog.requests.map(r => `${r.method} ${r.url.split('?')[0] ?? ''}`)
const warningsOf = (res: JsonAnswer): string => String(res.headers['x-iceguard-warnings'] ?? '')

function assertRefused (t: Test, catalog: RunningCatalog, res: JsonAnswer, id: string, table: string): void {
  const error = (res.json as { error?: { code?: number, message?: string } } | undefined)?.error
  t.equal(res.status, 400, `refused: ${res.text}`)
  t.equal(error?.code, 400, 'error.code is the status')
  t.match(error?.message, id, 'the message names the rule')
  t.same(reached(catalog), [`GET /v1/namespaces/db/tables/${table}`], 'only the gate\'s base load reached the catalog')
}

function assertForwarded (t: Test, catalog: RunningCatalog, res: JsonAnswer, path: string): void {
  t.equal(res.status, 200, `forwarded: ${res.text}`)
  t.ok(reached(catalog).includes(`POST ${path}`), 'the commit reached the catalog')
}

t.test('every platform rule that judges commits has a fixture folder', async t => {
  t.same(folders, judging)
})

onEveryTransport(t, t => {
  t.test('platform rules end to end through the gate', async t => {
    const catalog = await startCatalog(t, { warehouse: join(work, 'warehouse') })
    for (const ns of ['db', 'sales']) {
      const res = await postJson(`${catalog.url}/v1/namespaces`, { namespace: [ns], properties: {} })
      t.equal(res.status, 200, `namespace ${ns} created at the catalog`)
    }

    for (const id of folders) {
      await t.test(id, async t => {
        const dir = join(root, id)
        const expected = JSON.parse(readFileSync(join(dir, 'expected.json'), 'utf8')) as Array<{ rule: string }>
        const commit = readJson(join(dir, 'commit.json'))
        const path = isCreate(commit) ? '/v1/namespaces/db/tables' : '/v1/namespaces/db/tables/orders'

        const enforce = await startProxy(t, { upstream: catalog.url, policy: policyFile(dir) })
        const enforced = await send(catalog, enforce.url, dir, 'db', 'orders')
        if (expected.length === 0) {
        // A negative fixture: nothing to find, so the commit goes through.
          assertForwarded(t, catalog, enforced, path)
          t.notMatch(warningsOf(enforced), id, 'no warning for the rule')
        } else {
          t.ok(expected.some(f => f.rule === id), 'the fixture expects its rule')
          if (isCreate(commit)) {
            t.equal(enforced.status, 400, `refused: ${enforced.text}`)
            t.match(enforced.text, id)
            t.notOk(reached(catalog).some(r => r.startsWith('POST')), 'no POST reached the catalog')
          } else {
            assertRefused(t, catalog, enforced, id, 'orders')
          }
        }

        // The same commit on a table outside the rule's scope stays under builtin:spec.
        const untouched = await send(catalog, enforce.url, dir, 'sales', 'orders')
        assertForwarded(t, catalog, untouched, path.replace('/db/', '/sales/'))
        t.notMatch(warningsOf(untouched), id, 'no warning on a table the rule is not enabled for')
        await enforce.close()

        const warn = await startProxy(t, { upstream: catalog.url, policy: policyFile(dir, withMode('warn')) })
        const warned = await send(catalog, warn.url, dir, 'db', 'orders')
        assertForwarded(t, catalog, warned, path)
        if (expected.length > 0) t.match(warningsOf(warned), id, 'x-iceguard-warnings names the rule')
        t.notOk(warned.text.includes(`"${BIG_ID}"`) || warned.text.includes('3055729675574597000'), 'the 64-bit snapshot id stays an exact number')
        await warn.close()
      })
    }

    await t.test('a namespace that sets the rule off is untouched while the rule is on everywhere else', async t => {
      const dir = join(root, 'COLUMN_NO_DROP')
      const policy = policyFile(dir, doc => {
        doc.set('rules', { COLUMN_NO_DROP: 'error' })
        doc.set('namespaces', { sales: { rules: { COLUMN_NO_DROP: 'off' } } })
      })
      const proxy = await startProxy(t, { upstream: catalog.url, policy })

      const off = await send(catalog, proxy.url, dir, 'sales', 'orders')
      assertForwarded(t, catalog, off, '/v1/namespaces/sales/tables/orders')
      t.notMatch(warningsOf(off), 'COLUMN_NO_DROP', 'forwarded without a warning')

      const on = await send(catalog, proxy.url, dir, 'db', 'orders')
      assertRefused(t, catalog, on, 'COLUMN_NO_DROP', 'orders')
    })
  })
})
