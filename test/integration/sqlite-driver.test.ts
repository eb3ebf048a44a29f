/**
 * The SQLite driver's own thread: a write waiting on the file's lock leaves this thread free, a
 * thread that stops fails its callers with an error (never a hang) and the next call gets a new
 * one, a close stores everything queued before it, and a failed transaction leaves nothing.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import t, { type Test } from 'tap'
import { kSqliteThread, openSqlite } from '../../src/decisions/sqlite-driver.js'

function stateFile (t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'iceguard-sqlite-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return join(dir, 'decisions.sqlite')
}

const sleep = async (ms: number): Promise<void> => await new Promise(resolve => setTimeout(resolve, ms))

t.test('a write waiting on the file\'s lock does not hold up the thread that asked for it', async t => {
  const file = stateFile(t)
  const db = openSqlite(file)
  t.teardown(async () => { await db.close() })
  await db.run('CREATE TABLE d (id TEXT PRIMARY KEY)')

  // Another process's writer (a CLI on the same state folder) holds the write lock.
  const other = new Database(file)
  t.teardown(() => { other.close() })
  other.exec('BEGIN IMMEDIATE')
  const events: string[] = []
  const stored = db.run('INSERT INTO d (id) VALUES (?)', ['a']).then(n => { events.push('stored'); return n })
  await sleep(50)
  events.push('timer fired')
  other.exec('COMMIT')
  t.equal(await stored, 1, 'the write goes through once the lock is released')
  t.same(events, ['timer fired', 'stored'], 'this thread ran its timers while the write waited')
})

t.test('a thread that stops fails what waits on it, and the next call starts a new one', async t => {
  const file = stateFile(t)
  const db = openSqlite(file)
  t.teardown(async () => { await db.close() })
  await db.run('CREATE TABLE d (id TEXT PRIMARY KEY)')
  await db.run('INSERT INTO d (id) VALUES (?)', ['kept'])

  const first = db[kSqliteThread]()
  t.ok(first, 'the store runs on a thread of its own')
  // In flight when the thread ends: a transaction that has begun and waits for its caller.
  let release = (): void => {}
  const gate = new Promise<void>(resolve => { release = resolve })
  const tx = db.transaction(async (q) => {
    await q.run('INSERT INTO d (id) VALUES (?)', ['lost'])
    await gate
    return await q.run('INSERT INTO d (id) VALUES (?)', ['never'])
  })
  await sleep(20)
  await first?.terminate()
  release()
  await t.rejects(tx, /SQLite decision store's thread stopped/, 'the transaction fails with an error naming the stopped thread')

  t.same(await db.query('SELECT id FROM d ORDER BY id'), [{ id: 'kept' }], 'the next call works on a new thread; the unfinished transaction left nothing')
  t.not(db[kSqliteThread](), first, 'and that thread is a new one')
  t.equal(await db.run('INSERT INTO d (id) VALUES (?)', ['after']), 1, 'the stopped thread\'s write lock went with it')
})

t.test('close stores everything queued before it', async t => {
  const file = stateFile(t)
  const db = openSqlite(file)
  await db.run('CREATE TABLE d (id TEXT PRIMARY KEY, n INTEGER)')
  const writes: Array<Promise<number>> = []
  for (let i = 0; i < 300; i++) writes.push(db.run('INSERT INTO d (id, n) VALUES (?, ?)', [`r${i}`, i]))
  writes.push(db.transaction(async (q) => await q.run('INSERT INTO d (id, n) VALUES (?, ?)', ['tx', -1])))
  await db.close()
  t.same((await Promise.all(writes)).reduce((a, b) => a + b, 0), 301, 'every write queued before the close was answered')
  await t.rejects(db.run('INSERT INTO d (id) VALUES (?)', ['late']), /closed/, 'a call after the close is refused')

  const again = new Database(file, { readonly: true })
  t.teardown(() => { again.close() })
  t.same(again.prepare('SELECT count(*) AS n FROM d').get(), { n: 301 }, 'and every one is in the file')
})

t.test('a statement that fails rejects with SQLite\'s code, and its transaction is rolled back', async t => {
  const db = openSqlite(':memory:')
  t.teardown(async () => { await db.close() })
  await db.run('CREATE TABLE d (id TEXT PRIMARY KEY, flag INTEGER, note TEXT)')
  await t.rejects(db.transaction(async (q) => {
    await q.run('INSERT INTO d (id, flag, note) VALUES (?, ?, ?)', ['a', true, undefined])
    await q.run('INSERT INTO d (id) VALUES (?)', ['a'])
  }), { code: 'SQLITE_CONSTRAINT_PRIMARYKEY' }, 'a duplicate id fails with its code')
  t.same(await db.query('SELECT * FROM d'), [], 'the first insert of the failed transaction is gone')
  await db.run('INSERT INTO d (id, flag, note) VALUES (?, ?, ?)', ['b', false, undefined])
  t.same(await db.query('SELECT * FROM d'), [{ id: 'b', flag: 0, note: null }], 'booleans are stored as 0/1, undefined as null')
  await t.rejects(db.query('SELECT nope FROM d'), /no such column/, 'a bad statement is an error, and the store goes on')
  t.equal(await db.run('UPDATE d SET note = ? WHERE id = ?', ['x', 'b']), 1, 'after it')
})

t.test('a batch runs its statements in one transaction: all of them, or none when one fails', async t => {
  const db = openSqlite(':memory:')
  t.teardown(async () => { await db.close() })
  await db.run('CREATE TABLE d (id TEXT PRIMARY KEY, flag INTEGER, note TEXT)')
  await db.batch([
    { sql: 'INSERT INTO d (id, flag, note) VALUES (?, ?, ?)', params: ['a', true, undefined] },
    { sql: 'INSERT INTO d (id, flag) VALUES (?, ?)', params: ['b', false] }
  ])
  t.same(await db.query('SELECT * FROM d ORDER BY id'), [{ id: 'a', flag: 1, note: null }, { id: 'b', flag: 0, note: null }], 'both rows, bound as single statements are')
  await t.rejects(db.batch([
    { sql: 'INSERT INTO d (id) VALUES (?)', params: ['c'] },
    { sql: 'INSERT INTO d (id) VALUES (?)', params: ['a'] }
  ]), { code: 'SQLITE_CONSTRAINT_PRIMARYKEY' }, 'a duplicate id fails the batch with its code')
  t.same(await db.query('SELECT id FROM d ORDER BY id'), [{ id: 'a' }, { id: 'b' }], 'the batch\'s first insert is gone with it')
  await db.batch([])
  t.equal(await db.run('UPDATE d SET note = ? WHERE id = ?', ['x', 'b']), 1, 'an empty batch runs nothing, and the store goes on')
})

t.test('a file the thread cannot open fails the calls with SQLite\'s reason, not a hang', async t => {
  const file = stateFile(t)
  mkdirSync(file) // a folder where the database file should be
  const db = openSqlite(file)
  t.teardown(async () => { await db.close() })
  await t.rejects(db.run('CREATE TABLE d (id TEXT)'), /thread stopped.*(unable to open|directory)/i, 'the first call fails and names why')
  await t.rejects(db.query('SELECT 1'), /thread stopped/, 'and so does the next, on a new thread')
})
