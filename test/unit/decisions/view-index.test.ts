/**
 * The view index over the decision store (SQLite file): what one instance writes another reads
 * after a refresh (a restart, or another replica), renames and drops follow, and a complete crawl
 * forgets views it no longer finds unless they were written since it began.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { DecisionStore } from '../../../src/decisions/decision-store.js'
import { openSqlite } from '../../../src/decisions/sqlite-driver.js'
import { ViewIndex } from '../../../src/decisions/view-index.js'
import { ViewIndexStore } from '../../../src/decisions/view-index-store.js'
import type { ViewReads } from '../../../src/iceberg/view-reads.js'

const reads = (column: string, fieldId: number): ViewReads => ({
  dialects: ['spark'],
  parsed: true,
  tables: [{ table: ['sales', 'orders'], columns: [{ name: column, fieldId, pathIds: [fieldId] }], star: false }]
})
const ORDERS = { namespace: ['sales'], name: 'orders' }

t.test('written, renamed and dropped views persist and are shared through the store', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'iceguard-view-index-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'decisions.sqlite')
  const storeA = new DecisionStore(openSqlite(file))
  const storeB = new DecisionStore(openSqlite(file))
  t.teardown(async () => { await storeA.close(); await storeB.close() })
  let now = 1000
  const a = new ViewIndex(new ViewIndexStore(storeA), { now: () => now })
  const b = new ViewIndex(new ViewIndexStore(storeB), { now: () => now })

  a.written({ namespace: ['sales'], name: 'v1' }, reads('amount', 2))
  a.written({ namespace: ['sales'], name: 'v2' }, reads('id', 1))
  a.written({ prefix: 'other', namespace: ['sales'], name: 'v3' }, reads('id', 1))
  t.same(a.dependentsOf(ORDERS).map(v => v.name), ['v1', 'v2'], 'at once in the writer, within its prefix')
  await a.stop()
  await b.refresh()
  t.same(b.dependentsOf(ORDERS).map(v => [v.name, v.columns[0]?.fieldId]), [['v1', 2], ['v2', 1]], 'another instance reads them from the store')
  t.same(b.dependentsOf({ ...ORDERS, prefix: 'other' }).map(v => v.name), ['v3'])

  b.renamed({ namespace: ['sales'], name: 'v1' }, { namespace: ['sales'], name: 'v1_new' })
  b.dropped({ namespace: ['sales'], name: 'v2' })
  await b.stop()
  await a.refresh()
  t.same(a.dependentsOf(ORDERS).map(v => v.name), ['v1_new'])
  t.same(a.status(), { views: 2, unparsed: 0, complete: false, errors: ['the catalog has not been crawled yet: only views written through iceguard are known'] })

  // A complete crawl that began at 2000 and did not see v1_new (written at 1000) forgets it; one written after it began stays.
  now = 3000
  a.written({ namespace: ['sales'], name: 'late' }, reads('id', 1))
  await a.stop()
  await a.crawled('', [{ prefix: '', namespace: ['sales'], name: 'seen', reads: reads('amount', 2), indexedAt: 2500 }], { indexedAt: 2000, complete: true, errors: [] }, 2000)
  t.same(a.dependentsOf(ORDERS).map(v => v.name), ['late', 'seen'])
  t.same(a.status(), { views: 3, unparsed: 0, indexedAt: new Date(2000).toISOString(), complete: true, errors: [] }, 'v3 of the other prefix is not this crawl\'s')
})

t.test('a view written while a reload reads the store is not undone by that reload', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'iceguard-view-index-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const store = new DecisionStore(openSqlite(join(dir, 'decisions.sqlite')))
  t.teardown(async () => { await store.close() })
  const views = new ViewIndexStore(store)
  // The first read of the store answers what it held before the write below reached it.
  const list = views.list.bind(views)
  let lists = 0
  let release: () => void = () => {}
  let listed: () => void = () => {}
  const holding = new Promise<void>(resolve => { listed = resolve })
  views.list = async () => {
    const before = await list()
    if (lists++ === 0) {
      const held = new Promise<void>(resolve => { release = resolve })
      listed()
      await held
    }
    return before
  }
  const index = new ViewIndex(views)
  const reloading = index.refresh()
  await holding
  index.written({ namespace: ['sales'], name: 'fresh' }, reads('amount', 2))
  release()
  await reloading
  t.same(index.dependentsOf(ORDERS).map(v => v.name), ['fresh'], 'the view written during the reload is still known')
  t.equal(lists, 2, 'the reload read the store again once the write was stored')
  await index.stop()
})
