/**
 * The decision store on both databases: migrations, decisions (filters, newest-first paging,
 * retention), override records and the webhook outbox's leases. The same checks run on SQLite
 * always and on a throwaway PostgreSQL cluster when it is installed (required under CI).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import type { Decision } from '../../src/decisions/decision.js'
import { DecisionStore } from '../../src/decisions/decision-store.js'
import { MIGRATIONS } from '../../src/decisions/migrations.js'
import { openPostgres } from '../../src/decisions/pg-driver.js'
import { openSqlite } from '../../src/decisions/sqlite-driver.js'
import type { SqlDriver } from '../../src/decisions/sql-driver.js'
import { postgresSkip, startPostgres } from '../helpers/postgres.js'

const T0 = Date.parse('2026-03-01T00:00:00Z')

function decision (n: number, over: Partial<Decision> = {}): Decision {
  return {
    id: `d${String(n).padStart(3, '0')}`,
    time: T0 + Math.floor(n / 2) * 1000, // pairs share a millisecond: paging must order by id too
    requestId: `req-${n}`,
    principal: n % 3 === 0 ? 'sub:alice' : 'sub:bob',
    table: { namespace: n % 2 === 0 ? ['finance'] : ['finance', 'eu'], name: n % 4 < 2 ? 'orders' : 'customers' },
    kind: 'update-table',
    verdict: n % 5 === 0 ? 'deny' : 'allow',
    findings: n % 5 === 0 ? [{ rule: 'COLUMN_NO_DROP', severity: 'error', message: 'Cannot drop column: amount', fieldId: 3, path: 'amount' }] : [],
    changes: n % 5 === 0 ? '! dropped   3 amount: long' : '+ added     4 note: string (optional)',
    details: { flows: ['update'], status: n % 5 === 0 ? 400 : 200, forwarded: n % 5 !== 0, durationMs: 1, summary: 's' },
    ...over
  }
}

async function storeChecks (t: Test, open: () => SqlDriver): Promise<void> {
  const store = new DecisionStore(open())
  t.teardown(async () => { await store.close() })

  t.same(await store.migrate(), MIGRATIONS.map(m => m.version), 'every migration is applied on a new database')
  const again = new DecisionStore(open())
  t.same(await again.migrate(), [], 'a second start applies nothing')
  await again.close()
  const versions = await store.driver.query('SELECT version FROM schema_migrations ORDER BY version')
  t.same(versions.map(r => Number(r.version)), MIGRATIONS.map(m => m.version), 'schema_migrations records each version')

  const all = Array.from({ length: 40 }, (_, i) => decision(i))
  await store.insert(all)

  const newestFirst = [...all].sort((a, b) => b.time - a.time || (a.id < b.id ? 1 : -1)).map(d => d.id)
  const seen: string[] = []
  let page = await store.list({}, 7)
  for (;;) {
    seen.push(...page.decisions.map(d => d.id))
    if (page.next === undefined) break
    page = await store.list({}, 7, page.next)
  }
  t.same(seen, newestFirst, 'pages of 7 give every decision once, newest first')

  const got = await store.get('d010')
  t.same(got, all[10], 'a decision reads back as written (findings, changes, details)')
  t.equal(await store.get('nope'), undefined, 'an unknown id reads as undefined')

  const ids = async (filter: Parameters<DecisionStore['list']>[0]): Promise<string[]> =>
    (await store.list(filter, 100)).decisions.map(d => d.id).sort()
  const expect = (pred: (d: Decision) => boolean): string[] => all.filter(pred).map(d => d.id).sort()
  t.same(await ids({ namespace: ['finance', 'eu'] }), expect(d => d.table.namespace.length === 2), 'namespace filter matches every level')
  t.same(await ids({ namespace: ['finance'], table: 'orders' }), expect(d => d.table.namespace.length === 1 && d.table.name === 'orders'), 'namespace and table')
  t.same(await ids({ verdict: 'deny' }), expect(d => d.verdict === 'deny'), 'verdict')
  t.same(await ids({ rule: 'COLUMN_NO_DROP' }), expect(d => d.findings.length > 0), 'rule')
  t.same(await ids({ rule: 'COLUMN_NO_%' }), [], 'a rule filter is an exact id, not a pattern')
  t.same(await ids({ principal: 'sub:alice' }), expect(d => d.principal === 'sub:alice'), 'principal')
  t.same(await ids({ since: T0 + 5000, until: T0 + 10000 }), expect(d => d.time >= T0 + 5000 && d.time < T0 + 10000), 'since is inclusive, until exclusive')

  t.equal(await store.prune(T0 + 10_000), 20, 'retention deletes the decisions older than the cut-off')
  t.same((await store.list({ rule: 'COLUMN_NO_DROP' }, 100)).decisions.map(d => d.id).sort(), expect(d => d.findings.length > 0 && d.time >= T0 + 10_000), 'and their rule index')

  // Override records.
  await store.recordOverride({ id: 'tok1', table: 'finance.orders', rules: ['COLUMN_NO_DROP'], reason: 'incident 7', mintedBy: 'token:abc', issuedAt: T0, expiresAt: T0 + 3600_000, source: 'minted' })
  await store.recordOverride({ id: 'tok1', table: 'other.table', rules: [], expiresAt: T0, source: 'seen' })
  t.match(await store.getOverride('tok1'), { table: 'finance.orders', reason: 'incident 7', source: 'minted' }, 'the first record of a token wins')
  t.same(await store.revokedIds(T0), [], 'nothing revoked yet')
  const revoked = await store.revokeOverride('tok1', 'token:admin', T0 + 60_000, T0 + 7 * 86400_000)
  t.match(revoked, { revokedAt: T0 + 60_000, revokedBy: 'token:admin' }, 'revoking stamps who and when')
  await store.revokeOverride('tok1', 'token:later', T0 + 120_000, T0 + 7 * 86400_000)
  t.match(await store.getOverride('tok1'), { revokedAt: T0 + 60_000, revokedBy: 'token:admin' }, 'revoking twice keeps the first')
  t.same(await store.revokedIds(T0), ['tok1'], 'the revoked id is listed while the token could still be used')
  t.same(await store.revokedIds(T0 + 3600_000), [], 'and no longer once it expired')
  t.same((await store.listOverrides({ activeAt: T0 })).map(o => o.id), [], 'a revoked token is not active')
  t.match(await store.revokeOverride('offline', undefined, T0, T0 + 7 * 86400_000), { id: 'offline', source: 'revoked', revokedAt: T0, expiresAt: T0 + 7 * 86400_000 },
    'a token never seen can be revoked ahead of its first use')
  t.same((await store.revokedIds(T0)).sort(), ['offline', 'tok1'], 'and is refused from then on')

  // Outbox leases.
  await store.insert([decision(100)], [{ id: 'm1', decisionId: 'd100', url: 'http://127.0.0.1:9/hook', secretRef: 'global', body: '{}' }], T0)
  const first = await store.claimOutbox(T0, 10, 30_000)
  t.same(first.map(m => m.id), ['m1'], 'a due message is claimed')
  t.same(await store.claimOutbox(T0 + 1000, 10, 30_000), [], 'a leased message is not claimed again (another replica)')
  await store.markAttemptFailed('m1', 'ECONNREFUSED', T0 + 1000, T0 + 5000)
  t.same(await store.claimOutbox(T0 + 2000, 10, 30_000), [], 'a failed attempt waits for its backoff')
  const retry = await store.claimOutbox(T0 + 5000, 10, 30_000)
  t.same(retry.map(m => [m.id, m.attempts]), [['m1', 1]], 'then is claimed again with its attempt count')
  await store.markDelivered('m1', T0 + 6000)
  t.same(await store.claimOutbox(T0 + 999_999, 10, 30_000), [], 'a delivered message is done')
}

t.test('SQLite (a file in the state folder)', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'iceguard-state-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  await storeChecks(t, () => openSqlite(join(dir, 'decisions.sqlite')))
})

t.test('PostgreSQL', { skip: postgresSkip }, async t => {
  const pgServer = await startPostgres(t)
  if (pgServer === undefined) return
  await storeChecks(t, () => openPostgres(pgServer.url))

  t.test('replicas starting together migrate once', async t => {
    const url = await pgServer.createDatabase('replicas')
    const stores = [0, 1, 2].map(() => new DecisionStore(openPostgres(url)))
    t.teardown(async () => { for (const s of stores) await s.close() })
    const applied = await Promise.all(stores.map(async s => await s.migrate()))
    t.same(applied.flat().sort(), MIGRATIONS.map(m => m.version), 'each migration ran on exactly one of them')
  })
})
