/**
 * The requirement splicer (src/json/splice-requirements.ts) on generated commit bodies: whatever
 * the whitespace, key order, escapes and multi-byte text around it, the result is a body the gate
 * accepts, equal to the input with the requirements added (after the client's own, or replacing
 * a `requirements` that is not an array), and every byte of the input is still there, in order.
 */
import fc from 'fast-check'
import t from 'tap'
import { parseCommitBody } from '../../../src/json/parse-commit-body.js'
import { requirementJson, spliceRequirements, type SplicedRequirement } from '../../../src/json/splice-requirements.js'

const CSID: SplicedRequirement = { type: 'assert-current-schema-id', field: 'current-schema-id', value: 7 }
const LCID: SplicedRequirement = { type: 'assert-last-assigned-field-id', field: 'last-assigned-field-id', value: 12 }

const ws = fc.constantFrom('', '', ' ', '\n  ', '\t', '\r\n')
/** Values that hide look-alikes: the key's name inside strings, escaped quotes, brackets in strings, UTF-8. */
const filler = fc.constantFrom('1', '4159988147758116429', '-0.5e-3', 'true', 'null', '"requirements"', '"x\\"]}"', '"naïve ✓ 日本 🧊"',
  '{"requirements":[1]}', '[{"requirements":"[x]"},[]]', '"\\\\"', '{}', '[]')
const requirementsValue = fc.constantFrom('[]', '[ ]', '[{"type":"assert-table-uuid","uuid":"u"}]', '[ {"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":null} ,\n {"type":"assert-table-uuid","uuid":"\\"]"} ]', 'null', '{}', '"none"')
const requirementsKey = fc.constantFrom('"requirements"', '"requir\\u0065ments"')
/** A request object: other members in any order around an optional `requirements` member. */
const request = fc.tuple(
  fc.array(fc.tuple(fc.constantFrom('"identifier"', '"updates"', '"doc"', '"k\\n"', '"é"'), filler), { maxLength: 4 }),
  fc.option(fc.tuple(requirementsKey, requirementsValue, fc.nat())),
  ws
).map(([others, req, w]) => {
  const seen = new Set<string>()
  const members = others.filter(([k]) => !seen.has(k) && seen.add(k) !== undefined).map(([k, v]) => `${w}${k}${w}:${w}${v}`)
  if (req === null) return { text: `{${members.join(',')}${w}}` }
  const k = req[2] % (members.length + 1)
  const head = `{${[...members.slice(0, k), ''].join(',')}${w}${req[0]}${w}:${w}`
  return { text: `${head}${req[1]}${[',', ...members.slice(k)].join(',').slice(members.length > k ? 1 : 2)}${w}}`, valueAt: head.length, existing: req[1] }
})

/**
 * The input's bytes appear in the output in order: only insertions, or the one value at `replaced`
 * (a non-array `requirements`) gone.
 */
function keepsBytes (input: Buffer, output: Buffer, replaced?: { at: number, length: number }): boolean {
  const kept = replaced === undefined ? input : Buffer.concat([input.subarray(0, replaced.at), input.subarray(replaced.at + replaced.length)])
  let i = 0
  for (let j = 0; i < kept.length && j < output.length; j++) if (kept[i] === output[j]) i++
  return i === kept.length
}

t.test('one request: added after the client\'s own, everything else as received', async t => {
  fc.assert(fc.property(request, fc.constantFrom([CSID], [CSID, LCID]), ({ text, valueAt, existing }, requirements) => {
    const raw = Buffer.from(text)
    if (!parseCommitBody(raw).ok) return true
    const out = spliceRequirements(raw, [{ at: [], requirements }])
    const read = parseCommitBody(out)
    if (!read.ok) return false
    const before = JSON.parse(text) as Record<string, unknown>
    const after = JSON.parse(out.toString()) as Record<string, unknown>
    const own = Array.isArray(before.requirements) ? before.requirements : []
    const expected = { ...before, requirements: [...own, ...requirements.map(r => JSON.parse(requirementJson(r)) as unknown)] }
    // Byte offsets: the text before the value may hold multi-byte characters.
    const replaced = valueAt === undefined || existing === undefined || existing.startsWith('[') ? undefined : { at: Buffer.byteLength(text.slice(0, valueAt)), length: Buffer.byteLength(existing) }
    return JSON.stringify(Object.entries(after).sort()) === JSON.stringify(Object.entries(expected).sort()) && keepsBytes(raw, out, replaced)
  }), { numRuns: 2000 })
  t.pass('the property held')
})

t.test('a transaction: each table change at its path, in one pass', async t => {
  fc.assert(fc.property(fc.array(request, { minLength: 1, maxLength: 3 }), ws, fc.nat(), (changes, w, pick) => {
    const text = `{${w}"table-changes"${w}:${w}[${changes.map(c => c.text).join(`,${w}`)}]${w}}`
    const raw = Buffer.from(text)
    if (!parseCommitBody(raw).ok) return true
    const k = pick % changes.length
    const out = spliceRequirements(raw, [{ at: ['table-changes', k], requirements: [CSID] }])
    if (!parseCommitBody(out).ok) return false
    const before = (JSON.parse(text) as { 'table-changes': Array<Record<string, unknown>> })['table-changes']
    const after = (JSON.parse(out.toString()) as { 'table-changes': Array<Record<string, unknown>> })['table-changes']
    return after.every((change, j) => {
      if (j !== k) return JSON.stringify(change) === JSON.stringify(before[j])
      const reqs = change.requirements as unknown[]
      return JSON.stringify(reqs[reqs.length - 1]) === requirementJson(CSID)
    })
  }), { numRuns: 1000 })
  t.pass('the property held')
})

t.test('byte offsets, the BOM, and paths that are not there', async t => {
  const utf8 = '{"updates":[{"action":"set-properties","updates":{"naïve ✓":"日本"}}],"requirements":[]}'
  t.equal(spliceRequirements(Buffer.from(utf8), [{ at: [], requirements: [CSID] }]).toString(),
    utf8.replace('"requirements":[]', `"requirements":[${requirementJson(CSID)}]`), 'after multi-byte characters')
  const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"updates":[]}')])
  t.same(spliceRequirements(bom, [{ at: [], requirements: [CSID] }]),
    Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(`{"requirements":[${requirementJson(CSID)}],"updates":[]}`)]), 'a byte order mark is left in place')
  const same = Buffer.from('{"updates":[]}')
  t.equal(spliceRequirements(same, [{ at: [], requirements: [] }]), same, 'nothing to add: the very buffer')
  t.throws(() => spliceRequirements(Buffer.from('[1]'), [{ at: [], requirements: [CSID] }]), /not a JSON object/)
  t.throws(() => spliceRequirements(Buffer.from('{"table-changes":[]}'), [{ at: ['table-changes', 0], requirements: [CSID] }]), /no element 0/)
  t.throws(() => spliceRequirements(Buffer.from('{"a":1}'), [{ at: ['table-changes', 0], requirements: [CSID] }]), /no member table-changes/)
  t.throws(() => spliceRequirements(Buffer.from('{"table-changes":[1]}'), [{ at: ['table-changes', 0], requirements: [CSID] }]), /not a JSON object/)
})
