/**
 * The error catalogue (src/errors.ts) and its page (docs/errors.md) list the same errors with the
 * same status and type, in both directions, as fastify keeps lib/errors.js and its Errors.md.
 */
import { readFileSync } from 'node:fs'
import t from 'tap'
import { ERRORS, GateError } from '../../src/errors.js'
import { closingAnswer } from '../../src/edge/client-error.js'

interface Row { readonly status: number, readonly type: string, readonly when: string }

const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8')
const rows = new Map<string, Row>()
for (const line of doc.split('\n')) {
  const m = /^\| `(GATE_ERR_[A-Z_]+)` \| (\d{3}) \| `(\w+)` \| (.+) \|$/.exec(line)
  if (m !== null) rows.set(m[1] as string, { status: Number(m[2]), type: m[3] as string, when: m[4] as string })
}

t.test('every catalogued error is documented with its status, type and when', async t => {
  for (const [name, def] of Object.entries(ERRORS)) {
    t.equal(def.code, `GATE_ERR_${name}`, `${name}: the code is the key`)
    const row = rows.get(def.code)
    if (row === undefined) {
      t.fail(`${def.code} is not in docs/errors.md`)
      continue
    }
    t.same(row, { status: def.status, type: def.type, when: def.when }, `${def.code} documented as catalogued`)
  }
})

t.test('every documented error exists in the catalogue', async t => {
  t.ok(rows.size > 0, 'the page has a catalogue table')
  const codes = new Set(Object.values(ERRORS).map(d => d.code))
  for (const code of rows.keys()) t.ok(codes.has(code), `${code} is in src/errors.ts`)
})

t.test('statuses follow the house rules', async t => {
  for (const def of Object.values(ERRORS)) {
    t.ok(def.status >= 400 && def.status < 600, `${def.code}: an error status`)
    // 409 is only CommitFailedException's (stale base) or the catalog's conflicts; never a finding.
    if (def.type === 'ValidationException') t.equal(def.status, 400, `${def.code}: a finding is a 400`)
    if (def.type === 'CommitStateUnknownException') t.ok(def.status === 502 || def.status === 504, `${def.code}: state unknown is 502/504`)
  }
})

t.test('an error renders as the Iceberg body with code equal to the status', async t => {
  const err = new GateError(ERRORS.COMMIT_CONFLICT, 'Cannot commit to db.t: stale', { details: ['assert-current-schema-id: 1 != 2'] })
  t.same(err.toResponse(), { error: { message: 'Cannot commit to db.t: stale', type: 'CommitFailedException', code: 409, stack: ['assert-current-schema-id: 1 != 2'] } })
  t.equal(err.code, 'GATE_ERR_COMMIT_CONFLICT')
})

t.test('a refusal written on a raw connection is the catalogue entry, framed by its UTF-8 length', async t => {
  const raw = closingAnswer(new GateError(ERRORS.HEADERS_TOO_LARGE, 'Cannot read request: header naïve is too large')).toString('utf8')
  const [head = '', body = ''] = raw.split('\r\n\r\n')
  t.match(head, /^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/, 'the status line carries the entry\'s status')
  t.match(head, /\r\nconnection: close(\r\n|$)/, 'the connection is closed after it')
  t.match(head, /\r\ncontent-type: application\/json(\r\n|$)/)
  t.equal(Number(/\r\ncontent-length: (\d+)/.exec(head)?.[1]), Buffer.byteLength(body), 'content-length counts the bytes of the body')
  t.same(JSON.parse(body), { error: { message: 'Cannot read request: header naïve is too large', type: ERRORS.HEADERS_TOO_LARGE.type, code: 431 } })
})
