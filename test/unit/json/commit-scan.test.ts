/**
 * The fast lane's commit scanner (src/json/commit-scan.ts) decides, from the raw bytes, that a
 * commit holds data actions alone and may skip the gate. It is a one-pass JSON validator; these
 * tests hold it to the scan it replaced (an action scan, then `isUtf8` + `JSON.parse`,
 * test/helpers/commit-scan-reference.ts): the same answer on every body, hand-written and
 * generated, so a body the gate must see is never forwarded ungated.
 */
import fc from 'fast-check'
import t, { type Test } from 'tap'
import { applyEdits, byteEdit } from '../../helpers/byte-edits.js'
import { DATA_ACTIONS, needsGate } from '../../../src/json/commit-scan.js'
import { needsGateByParse, onlyDataActions } from '../../helpers/commit-scan-reference.js'

const SCHEMA_ACTIONS = ['add-schema', 'set-current-schema', 'add-spec', 'set-default-spec', 'add-sort-order',
  'set-default-sort-order', 'upgrade-format-version', 'remove-schemas', 'remove-partition-specs', 'add-view-version']

/** A data commit shaped like the benchmark's: add-snapshot with a summary, then set-snapshot-ref. */
const DATA_COMMIT = JSON.stringify({
  identifier: { namespace: ['bench'], name: 'small' },
  requirements: [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': 1 }],
  updates: [
    { action: 'add-snapshot', snapshot: { 'snapshot-id': 2, 'sequence-number': 4, 'timestamp-ms': 1764000180000, 'manifest-list': 's3://w/m.avro', summary: { operation: 'append', 'added-records': '40000' }, 'schema-id': 0 } },
    { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': 2 }
  ]
}).replace('"snapshot-id":1}', '"snapshot-id":4043477435224474637}').replaceAll('"snapshot-id":2', '"snapshot-id":4159988147758116429')

/** Both scanners' answers, and whether they agree. */
function decide (body: string | Buffer): { now: boolean, before: boolean } {
  const raw = typeof body === 'string' ? Buffer.from(body) : body
  return { now: needsGate(raw), before: needsGateByParse(raw) }
}

function gated (t: Test, body: string | Buffer, name: string): void {
  const d = decide(body)
  t.same(d, { now: true, before: true }, name)
}

function skips (t: Test, body: string | Buffer, name: string): void {
  const d = decide(body)
  t.same(d, { now: false, before: false }, name)
}

t.test('data-only commits skip the gate, compact and pretty-printed', async t => {
  skips(t, DATA_COMMIT, 'the benchmark-shaped commit')
  skips(t, JSON.stringify(JSON.parse(DATA_COMMIT), null, 2), 'pretty-printed (newlines: the byte-by-byte path)')
  skips(t, JSON.stringify(JSON.parse(DATA_COMMIT), null, '\t'), 'tab-indented')
  skips(t, ' \r\n{"updates":[]} \r\n', 'whitespace around the body')
  skips(t, '{"updates":[{"action":"set-properties","updates":{"note":"say \\"hi\\" \\\\ \\/ \\b\\f\\n\\r\\t"}}]}', 'short escapes in a value')
  skips(t, '{"updates":[{"action":"set-properties","updates":{"k\\n":"v"}}]}', 'an escaped key that is not action')
  skips(t, '{"updates":[{"action":"set-properties","updates":{"owner":"Zoë 🧊 \u2028"}}]}', 'UTF-8 in a value')
  skips(t, '{"updates":[{"action":"set-properties","updates":{"del":"\u007f"}}]}', 'DEL is allowed in a string')
  skips(t, '{"n":[0,-0,1,-1,10,1.5,-0.25,1e5,1E+5,1e-5,0.0e0,3055729675574597004,-9223372036854775808],"l":[true,false,null],"o":{},"a":[],"e":""}', 'every number and literal form')
  skips(t, '{"updates":[{"action":"ADD-SNAPSHOT"},{"action":"Set-Snapshot-Ref"}]}', 'action values in any letter case')
  for (const action of DATA_ACTIONS) skips(t, `{"updates":[{"action":"${action}"}]}`, action)
  skips(t, `{"a":${'['.repeat(255)}${']'.repeat(255)}}`, '256 levels deep: the gate\'s own bound')
})

t.test('bodies the scanner must refuse', async t => {
  const bodies: Record<string, string> = {
    'schema action': '{"updates":[{"action":"add-schema"}]}',
    'schema action after data actions': '{"updates":[{"action":"add-snapshot"},{"action":"set-snapshot-ref"},{"action":"set-current-schema"}]}',
    'duplicate action keys, schema last': '{"updates":[{"action":"add-snapshot","action":"add-schema"}]}',
    'duplicate action keys, schema first': '{"updates":[{"action":"add-schema","action":"add-snapshot"}]}',
    'updates repeated, schema in the second': '{"updates":[{"action":"add-snapshot"}],"updates":[{"action":"add-schema"}]}',
    'updates repeated, schema in the first': '{"updates":[{"action":"add-schema"}],"updates":[{"action":"add-snapshot"}]}',
    'unicode escape spelling add-schema': '{"updates":[{"action":"\\u0061dd-schema"}]}',
    'unicode escape spelling a data action': '{"updates":[{"action":"add-snapsho\\u0074"}]}',
    'unicode escape spelling the key': '{"updates":[{"\\u0061ction":"add-schema"}]}',
    'unicode escape anywhere': '{"updates":[{"action":"add-snapshot","summary":{"x":"\\u00e9"}}]}',
    'escape in an action value': '{"updates":[{"action":"add-snapshot\\/"}]}',
    'key in another case': '{"updates":[{"ACTION":"add-schema"}]}',
    'key in another case beside a data action': '{"updates":[{"action":"add-snapshot","Action":"add-schema"}]}',
    'action nested in a snapshot': '{"updates":[{"action":"add-snapshot","snapshot":{"summary":{"action":"add-schema"}}}]}',
    'action nested in an array': '{"updates":[{"action":"add-snapshot","x":[[{"action":"add-spec"}]]}]}',
    'action in a transaction': '{"table-changes":[{"updates":[{"action":"add-snapshot"}]},{"updates":[{"action":"add-sort-order"}]}]}',
    'non-string action': '{"updates":[{"action":["add-snapshot"]}]}',
    'number action': '{"updates":[{"action":1}]}',
    'null action': '{"updates":[{"action":null}]}',
    'non-ASCII action': '{"updates":[{"action":"add-snapshot\u0130"}]}',
    'action with a space': '{"updates":[{"action":"add-snapshot "}]}',
    'unknown action': '{"updates":[{"action":"add-snapshots"}]}',
    'not an object': '[{"action":"add-snapshot"}]',
    'a string': '"add-snapshot"',
    empty: '',
    'whitespace only': ' \n',
    'trailing comma in an object': '{"updates":[],}',
    'trailing comma in an array': '{"updates":[{"action":"add-snapshot"},]}',
    'missing comma': '{"a":1 "b":2}',
    'missing colon': '{"a" 1}',
    'missing value': '{"a":}',
    'leading comma': '{"a":[,1]}',
    'unquoted key': '{updates:[]}',
    'single quotes': '{\'updates\':[]}',
    'a comment': '{"updates":[]/* x */}',
    'leading zero': '{"a":01}',
    'lone minus': '{"a":-}',
    'plus sign': '{"a":+1}',
    'bare fraction': '{"a":.5}',
    'dot without digits': '{"a":1.}',
    'exponent without digits': '{"a":1e}',
    NaN: '{"a":NaN}',
    Infinity: '{"a":Infinity}',
    'hex number': '{"a":0x10}',
    'capital literal': '{"a":True}',
    'short literal': '{"a":nul}',
    'unterminated string': '{"a":"x}',
    'unterminated object': '{"a":1',
    'extra closing brace': '{"a":1}}',
    'mismatched bracket': '{"a":[1}',
    'a second document': '{"updates":[]}\n{"updates":[{"action":"add-schema"}]}',
    'trailing garbage': '{"updates":[]}x',
    'raw newline in a string': '{"updates":[{"action":"set-properties","updates":{"k":"a\nb"}}]}',
    'raw tab in a string': '{"updates":[{"action":"set-properties","updates":{"k":"a\tb"}}]}',
    'raw tab in an action': '{"updates":[{"action":"add-\tsnapshot"}]}',
    'NUL in a string': '{"updates":[{"action":"set-properties","updates":{"k":"a\u0000b"}}]}',
    'NUL between tokens': '{"updates":\u0000[]}',
    'vertical tab as whitespace': '{"updates":\u000b[]}',
    'form feed as whitespace': '{\f"updates":[]}',
    'non-breaking space as whitespace': '{"updates":\u00a0[]}',
    'invalid escape': '{"a":"\\q"}',
    'backslash at the end': '{"a":"\\',
    '257 levels deep': `{"a":${'['.repeat(256)}${']'.repeat(256)}}`,
    'deep and unclosed': `{"a":${'['.repeat(5000)}`
  }
  for (const [name, body] of Object.entries(bodies)) gated(t, body, name)

  // Bytes that are not UTF-8, or a BOM before the body.
  const bytes: Record<string, Buffer> = {
    BOM: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(DATA_COMMIT)]),
    'UTF-16LE': Buffer.from(DATA_COMMIT, 'utf16le'),
    'invalid byte in a value': Buffer.from('{"a":"x\xffy"}', 'latin1'),
    'latin1 é in a value': Buffer.from('{"a":"caf\xe9"}', 'latin1'),
    'overlong encoding of a quote': Buffer.from('{"a":"x\xc0\xa2"}', 'latin1'),
    'encoded surrogate': Buffer.from('{"a":"\xed\xa0\x80"}', 'latin1'),
    'truncated sequence at the end of a string': Buffer.from('{"a":"\xe2\x82"}', 'latin1'),
    'non-ASCII between tokens': Buffer.from('{"a":1\xc2\xa0}', 'latin1')
  }
  for (const [name, body] of Object.entries(bytes)) gated(t, body, name)
})

t.test('the scan leaves no state behind for the next body', async t => {
  // A refused body (mid-object, mid-action) must not change how the next one is read.
  gated(t, '{"a":{"action":', 'cut after an action key')
  skips(t, '{"updates":[{"action":"add-snapshot"}]}', 'then a data commit')
  gated(t, `{"a":${'['.repeat(300)}`, 'cut deep')
  skips(t, '{"a":[[1]],"b":{"c":[]}}', 'then nested containers')
  gated(t, '{"a":"\\u0041"}', 'an escape (byte path)')
  skips(t, DATA_COMMIT, 'then a compact body (indexOf path)')
})

// Generated bodies: commit-like texts, dressed actions, and random edits of valid bodies.

/** An action as a client might write it: any case, sometimes \u-escaped, sometimes not a string. */
const actionValue = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.tuple(fc.constantFrom(...DATA_ACTIONS, ...SCHEMA_ACTIONS, 'bogus', ''), fc.constantFrom('lower', 'upper', 'escape', 'mixed'))
      .map(([a, how]) => {
        if (how === 'upper') return JSON.stringify(a.toUpperCase())
        if (how === 'mixed') return JSON.stringify(a.replace(/^./, c => c.toUpperCase()))
        if (how === 'escape') return JSON.stringify(a).replace(/[a-z]/, c => `\\u00${c.charCodeAt(0).toString(16)}`)
        return JSON.stringify(a)
      })
  },
  { weight: 1, arbitrary: fc.constantFrom('1', 'null', 'true', '[]', '{}', '["add-snapshot"]', '{"action":"add-snapshot"}') }
)
const actionKey = fc.constantFrom('"action"', '"action"', '"action"', '"Action"', '"ACTION"', '"act\\u0069on"', '"actions"', '"act\\nion"', '"type"')
/** Whitespace as a pretty printer or a hand would put it (tab/newline force the byte-by-byte path). */
const ws = fc.constantFrom('', '', '', ' ', '\n  ', '\t', '\r\n')
const junk = fc.oneof(fc.json({ maxDepth: 2 }), fc.constantFrom('"x\\"y"', '"\\\\"', '"é"', '"\\u00e9"', '-0.5e-3', '"\u2028"'))

const commitText = fc.tuple(
  fc.array(fc.tuple(actionKey, actionValue, junk, ws, fc.boolean()), { maxLength: 5 }),
  junk,
  ws,
  fc.boolean()
).map(([updates, extra, space, transaction]) => {
  const items = updates.map(([key, action, more, w, first]) => first
    ? `{${w}${key}${w}:${w}${action},"snapshot":${more}}`
    : `{"snapshot":${more},${w}${key}:${action}${w}}`)
  const table = `{${space}"requirements":[],${space}"updates":[${items.join(`,${space}`)}],"extra":${extra}}`
  return transaction ? `{"table-changes":[${table},${table}]}` : table
})

/** Bytes a random edit may put in: structure, escapes, controls, non-ASCII and invalid UTF-8. */
const EDIT_BYTES = [0x22, 0x5c, 0x7b, 0x7d, 0x5b, 0x5d, 0x2c, 0x3a, 0x20, 0x0a, 0x09, 0x0d, 0x00, 0x0b, 0x1f,
  0x7f, 0x80, 0xc3, 0xa9, 0xed, 0xef, 0xff, 0x75, 0x61, 0x41, 0x30, 0x31, 0x2d, 0x2b, 0x2e, 0x65, 0x74, 0x6e, 0x66]
const edit = byteEdit(EDIT_BYTES)

/** Same answer as the scan it replaced; and a skipped body is strict JSON with data actions alone. */
function agrees (raw: Buffer): boolean {
  const now = needsGate(raw)
  if (now !== needsGateByParse(raw)) return false
  if (now) return true
  return onlyDataActions(raw)
}

t.test('agrees with the JSON.parse scan on generated bodies', async t => {
  const counts = { skipped: 0, gated: 0 }
  const tally = (raw: Buffer): boolean => {
    const ok = agrees(raw)
    counts[needsGate(raw) ? 'gated' : 'skipped']++
    return ok
  }
  t.doesNotThrow(() => {
    fc.assert(fc.property(commitText, text => tally(Buffer.from(text))), { numRuns: 3000 })
    fc.assert(fc.property(commitText, fc.array(edit, { minLength: 1, maxLength: 3 }), (text, edits) => tally(applyEdits(text, edits))), { numRuns: 3000 })
    fc.assert(fc.property(fc.array(edit, { minLength: 1, maxLength: 2 }), edits => tally(applyEdits(DATA_COMMIT, edits))), { numRuns: 3000 })
    fc.assert(fc.property(fc.json({ maxDepth: 4 }), ws, (text, w) => tally(Buffer.from(`{"v":${w}${text}${w}}`))), { numRuns: 1000 })
    fc.assert(fc.property(fc.uint8Array({ maxLength: 64 }), bytes => tally(Buffer.concat([Buffer.from('{"a":"'), bytes, Buffer.from('"}')]))), { numRuns: 1000 })
    fc.assert(fc.property(fc.uint8Array({ maxLength: 200 }), bytes => tally(Buffer.from(bytes))), { numRuns: 500 })
  })
  // The generators must reach both answers often, or the agreement says little.
  t.ok(counts.skipped > 1000, `${counts.skipped} generated bodies skip the gate`)
  t.ok(counts.gated > 3000, `${counts.gated} generated bodies need the gate`)
})
