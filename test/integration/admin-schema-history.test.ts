/**
 * The schema-history admin API pages its schemas as the REST spec pages listTables (`pageSize`,
 * `pageToken`, `next-page-token`), over real HTTP against the embedded catalog.
 */
import t from 'tap'
import { startCatalog, startProxy } from '../helpers/index.js'

async function send (url: string, body?: unknown): Promise<{ status: number, json: any }> {
  const res = await fetch(url, body === undefined ? {} : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  const text = await res.text()
  return { status: res.status, json: text === '' ? undefined : JSON.parse(text) }
}

t.test('schema history pages: every schema once, in order, lineage on every page', async t => {
  const catalog = await startCatalog(t)
  const proxy = await startProxy(t, { upstream: catalog.url })
  t.equal((await send(`${catalog.url}/v1/namespaces`, { namespace: ['db'], properties: {} })).status, 200)
  let fields: Array<Record<string, unknown>> = [{ id: 1, name: 'id', required: true, type: 'long' }]
  t.equal((await send(`${catalog.url}/v1/namespaces/db/tables`, { name: 'h', schema: { type: 'struct', fields } })).status, 200)
  // Seven more schemas: each adds a column (ids 2..8); the fourth also drops column 2.
  for (let k = 1; k <= 7; k++) {
    fields = [...fields.filter(f => !(k === 4 && f.id === 2)), { id: k + 1, name: `c${k + 1}`, required: false, type: 'string' }]
    const commit = {
      requirements: [{ type: 'assert-current-schema-id', 'current-schema-id': k - 1 }],
      updates: [{ action: 'add-schema', schema: { type: 'struct', 'schema-id': k, fields } }, { action: 'set-current-schema', 'schema-id': -1 }]
    }
    t.equal((await send(`${catalog.url}/v1/namespaces/db/tables/h`, commit)).status, 200, `schema ${k}`)
  }
  const at = `${proxy.url}/admin/v1/namespaces/db/tables/h/schemas`

  const whole = await send(at)
  t.equal(whole.status, 200)
  t.equal(whole.json.schemas.length, 8, 'a short history fits the default page')
  t.notOk('next-page-token' in whole.json, 'and has no next page')

  const pages: any[] = []
  let token: string | undefined = ''
  while (token !== undefined && pages.length < 10) {
    const page: { status: number, json: any } = await send(`${at}?pageSize=3&pageToken=${encodeURIComponent(token)}`)
    t.equal(page.status, 200)
    pages.push(page.json)
    token = page.json['next-page-token']
  }
  t.same(pages.map(p => p.schemas.map((s: any) => s['schema-id'])), [[0, 1, 2], [3, 4, 5], [6, 7]], 'three pages, in order')
  t.same(pages.flatMap(p => p.schemas), whole.json.schemas, 'together the whole history, diffs included')
  t.equal(pages[1].schemas[0]['previous-schema-id'], 2, 'a page\'s first schema still names the one before it')
  t.same(pages[1].schemas[1].changes.map((c: any) => c.kind).sort(), ['field-added', 'field-dropped'])
  for (const p of pages) {
    t.same(p.lineage, whole.json.lineage, 'lineage over the whole history on every page')
    t.same(p['dropped-names'], whole.json['dropped-names'])
  }
  t.match(whole.json['dropped-names'], [{ name: 'c2', 'field-id': 2, 'dropped-in-schema-id': 4 }])

  const bad = await send(`${at}?pageToken=bm90LWEtdG9rZW4`)
  t.equal(bad.status, 400, 'a token that is not one of this table\'s')
  t.match(bad.json.error, { type: 'BadRequestException', code: 400, message: /^Cannot read pageToken: / })
  for (const size of ['0', '-1', 'x', '1001']) {
    const refused = await send(`${at}?pageSize=${size}`)
    t.equal(refused.status, 400, `pageSize=${size}`)
    t.equal(refused.json.error.code, 400)
  }
})
