import fc from 'fast-check'
import t from 'tap'
import { diffSchemas } from '../../../src/engine/diff/schema-diff.js'
import { evaluateCommit } from '../../../src/engine/evaluate-commit.js'
import { parseSchema, parseTableMetadata } from '../../../src/iceberg/parse.js'
import { indexSchema } from '../../../src/iceberg/schema-index.js'
import type { Schema, TableMetadata } from '../../../src/iceberg/types.js'
import { SPEC_ONLY_SETTINGS } from '../../../src/engine/rules/settings.js'

type JType = string | { type: 'struct', fields: JField[] } | { type: 'list', 'element-id': number, element: JType, 'element-required': boolean } |
{ type: 'map', 'key-id': number, key: JType, 'value-id': number, value: JType, 'value-required': boolean }
interface JField { id: number, name: string, required: boolean, type: JType }
type Gen = fc.GeneratorValue

/** Picks by index: the picked object itself (never a copy) is what the step mutates. */
function pickOne<T> (g: Gen, xs: readonly T[]): T {
  return xs[g(fc.integer, { min: 0, max: xs.length - 1 })] as T
}

const PRIMS = ['int', 'long', 'float', 'double', 'string', 'date', 'boolean', 'decimal(9, 2)', 'binary']

/** A random nested schema: structs, lists of structs and primitives, maps with struct values. */
function randomFields (g: Gen, counter: { id: number }, depth: number): JField[] {
  const n = g(fc.integer, { min: 1, max: depth === 0 ? 6 : 4 })
  const out: JField[] = []
  for (let i = 0; i < n; i++) {
    const id = ++counter.id
    const kind = depth < 3 ? g(fc.constantFrom, 'prim', 'prim', 'prim', 'struct', 'list', 'map') : 'prim'
    let type: JType
    if (kind === 'struct') type = { type: 'struct', fields: randomFields(g, counter, depth + 1) }
    else if (kind === 'list') {
      const eid = ++counter.id
      type = { type: 'list', 'element-id': eid, 'element-required': g(fc.boolean), element: g(fc.boolean) ? { type: 'struct', fields: randomFields(g, counter, depth + 1) } : g(fc.constantFrom, ...PRIMS) }
    } else if (kind === 'map') {
      const kid = ++counter.id
      const vid = ++counter.id
      type = { type: 'map', 'key-id': kid, key: 'string', 'value-id': vid, 'value-required': g(fc.boolean), value: g(fc.boolean) ? { type: 'struct', fields: randomFields(g, counter, depth + 1) } : g(fc.constantFrom, ...PRIMS) }
    } else type = g(fc.constantFrom, ...PRIMS)
    out.push({ id, name: `f${id}`, required: g(fc.boolean), type })
  }
  return out
}

interface Slot { field: JField, siblings: JField[], ancestors: JField[], inCollection: boolean }

/** Every struct field with its sibling array and ancestors (list/map wrappers count as collections). */
function slots (fields: JField[]): Slot[] {
  const out: Slot[] = []
  const walk = (fs: JField[], ancestors: JField[], inCollection: boolean): void => {
    for (const f of fs) {
      out.push({ field: f, siblings: fs, ancestors, inCollection })
      const t = f.type
      if (typeof t === 'string') continue
      const next = [...ancestors, f]
      if (t.type === 'struct') walk(t.fields, next, inCollection)
      else if (t.type === 'list' && typeof t.element !== 'string' && t.element.type === 'struct') walk(t.element.fields, next, true)
      else if (t.type === 'map' && typeof t.value !== 'string' && t.value.type === 'struct') walk(t.value.fields, next, true)
    }
  }
  walk(fields, [], false)
  return out
}

/** Every struct (sibling array) a field may be added to, the root included. */
function structs (fields: JField[]): JField[][] {
  const out = [fields]
  for (const s of slots(fields)) {
    const t = s.field.type
    if (typeof t === 'string') continue
    if (t.type === 'struct') out.push(t.fields)
    else if (t.type === 'list' && typeof t.element !== 'string' && t.element.type === 'struct') out.push(t.element.fields)
    else if (t.type === 'map' && typeof t.value !== 'string' && t.value.type === 'struct') out.push(t.value.fields)
  }
  return out
}

interface Table { meta: TableMetadata, fields: JField[], protectedIds: Set<number>, identifier: number[], partitionSource?: number, last: number }

/** A table whose current schema is random; one identifier field, one partition source, one sort source. */
function randomTable (g: Gen): Table {
  const counter = { id: 0 }
  const fields = randomFields(g, counter, 0)
  fields.unshift({ id: ++counter.id, name: 'pk', required: true, type: 'long' })
  fields.push({ id: ++counter.id, name: 'ts', required: false, type: 'date' })
  const pk = fields[0] as JField
  const ts = fields[fields.length - 1] as JField
  const json = {
    'format-version': 2,
    'table-uuid': 'u',
    location: 's3://x',
    'last-column-id': counter.id,
    'current-schema-id': 0,
    schemas: [{ type: 'struct', 'schema-id': 0, 'identifier-field-ids': [pk.id], fields }],
    'default-spec-id': 0,
    'partition-specs': [{ 'spec-id': 0, fields: [{ 'source-id': ts.id, 'field-id': 1000, name: 'ts_day', transform: 'day' }] }],
    'default-sort-order-id': 1,
    'sort-orders': [{ 'order-id': 1, fields: [{ 'source-id': pk.id, transform: 'identity', direction: 'asc', 'null-order': 'nulls-first' }] }],
    properties: {}
  }
  const { metadata, issues } = parseTableMetadata(structuredClone(json))
  if (metadata === undefined) throw new Error(JSON.stringify(issues))
  return { meta: metadata, fields, protectedIds: new Set([pk.id, ts.id]), identifier: [pk.id], partitionSource: ts.id, last: counter.id }
}

type Step = 'add' | 'rename' | 'reorder' | 'widen' | 'drop' | 'optional'

/** Applies one legal evolution step to `fields` (mutated); returns false when none applies. */
function legalStep (g: Gen, table: Table, fields: JField[], step: Step, state: { last: number }): boolean {
  const all = slots(fields)
  switch (step) {
    case 'add': {
      const target = pickOne(g, structs(fields))
      const id = ++state.last
      target.splice(g(fc.integer, { min: 0, max: target.length }), 0, { id, name: `n${id}`, required: false, type: g(fc.constantFrom, ...PRIMS) })
      return true
    }
    case 'rename': {
      const s = pickOne(g, all)
      s.field.name = `${s.field.name}_r${g(fc.integer, { min: 0, max: 1e6 })}`
      return true
    }
    case 'reorder': {
      const target = structs(fields).filter(fs => fs.length >= 2)
      if (target.length === 0) return false
      const fs = pickOne(g, target)
      const i = g(fc.integer, { min: 1, max: fs.length - 1 })
      fs.unshift(...fs.splice(i, 1))
      return true
    }
    case 'widen': {
      const candidates = all.filter(s => s.field.type === 'int' || s.field.type === 'float' || s.field.type === 'decimal(9, 2)')
      if (candidates.length === 0) return false
      const s = pickOne(g, candidates)
      s.field.type = s.field.type === 'int' ? 'long' : s.field.type === 'float' ? 'double' : `decimal(${g(fc.integer, { min: 10, max: 38 })}, 2)`
      return true
    }
    case 'drop': {
      const referenced = (s: Slot): boolean => slots([s.field]).some(x => table.protectedIds.has(x.field.id))
      const candidates = all.filter(s => s.siblings.length > 1 && !referenced(s))
      if (candidates.length === 0) return false
      const s = pickOne(g, candidates)
      s.siblings.splice(s.siblings.indexOf(s.field), 1)
      return true
    }
    case 'optional': {
      const candidates = all.filter(s => s.field.required && !table.protectedIds.has(s.field.id))
      if (candidates.length === 0) return false
      pickOne(g, candidates).field.required = false
      return true
    }
  }
}

const ILLEGAL = ['narrow', 'tighten', 'required-add', 'duplicate-id', 'reserved-id', 'move', 'kind', 'drop-identifier', 'drop-partition-source', 'duplicate-name', 'v3-type'] as const
type Illegal = typeof ILLEGAL[number]
const EXPECTED: Record<Illegal, string> = {
  narrow: 'TYPE_PROMOTION_VALID',
  tighten: 'NULLABILITY_NOT_TIGHTENED',
  'required-add': 'REQUIRED_FIELD_HAS_DEFAULT',
  'duplicate-id': 'FIELD_ID_UNIQUE',
  'reserved-id': 'FIELD_ID_NOT_RESERVED',
  move: 'FIELD_PARENT_STABLE',
  kind: 'FIELD_KIND_STABLE',
  'drop-identifier': 'IDENTIFIER_FIELD_NOT_DROPPED',
  'drop-partition-source': 'PARTITION_SOURCE_NOT_DROPPED',
  'duplicate-name': 'FIELD_NAME_UNIQUE',
  'v3-type': 'FORMAT_VERSION_TYPES'
}

/** Applies one illegal step; returns false when the schema offers no place for it. */
function illegalStep (g: Gen, table: Table, fields: JField[], step: Illegal, state: { last: number }): boolean {
  // Only fields the base already has: a field added in this commit may take any shape.
  const existing = new Set(slots(table.fields).map(x => x.field.id))
  const all = slots(fields).filter(x => existing.has(x.field.id))
  const pick = (xs: Slot[]): Slot | undefined => xs.length === 0 ? undefined : pickOne(g, xs)
  switch (step) {
    case 'narrow': {
      const s = pick(all.filter(x => typeof x.field.type === 'string'))
      if (s === undefined) return false
      s.field.type = s.field.type === 'string' ? 'int' : 'string'
      return true
    }
    case 'tighten': {
      const optionalBefore = new Set(slots(table.fields).filter(x => !x.field.required).map(x => x.field.id))
      const s = pick(all.filter(x => !x.field.required && optionalBefore.has(x.field.id)))
      if (s === undefined) return false
      s.field.required = true
      return true
    }
    case 'required-add': {
      const id = ++state.last
      fields.push({ id, name: `req${id}`, required: true, type: 'string' })
      return true
    }
    case 'duplicate-id': {
      const s = pickOne(g, all)
      fields.push({ id: s.field.id, name: `dup${s.field.id}`, required: false, type: 'int' })
      return true
    }
    case 'reserved-id':
      fields.push({ id: 2147483447 + g(fc.integer, { min: 1, max: 100 }), name: 'reserved', required: false, type: 'int' })
      return true
    case 'move': {
      const s = pick(all.filter(x => x.ancestors.length > 0 && !x.inCollection && x.siblings.length > 1))
      if (s === undefined) return false
      s.siblings.splice(s.siblings.indexOf(s.field), 1)
      fields.push(s.field)
      return true
    }
    case 'kind': {
      const s = pick(all.filter(x => typeof x.field.type === 'string' && !table.protectedIds.has(x.field.id)))
      if (s === undefined) return false
      const id = ++state.last
      s.field.type = { type: 'struct', fields: [{ id, name: 'inner', required: false, type: 'int' }] }
      return true
    }
    case 'drop-identifier':
      fields.splice(fields.findIndex(f => f.id === table.identifier[0]), 1)
      return true
    case 'drop-partition-source':
      fields.splice(fields.findIndex(f => f.id === table.partitionSource), 1)
      return true
    case 'duplicate-name': {
      const target = pickOne(g, structs(fields))
      const id = ++state.last
      target.push({ id, name: (target[0] as JField).name, required: false, type: 'int' })
      return true
    }
    case 'v3-type': {
      const id = ++state.last
      fields.push({ id, name: `ns${id}`, required: false, type: 'timestamp_ns' })
      return true
    }
  }
}

function commit (fields: JField[], identifier: number[]): { requirements: unknown[], updates: unknown[] } {
  return {
    requirements: [{ type: 'assert-current-schema-id', 'current-schema-id': 0 }],
    updates: [
      { action: 'add-schema', schema: { type: 'struct', 'identifier-field-ids': identifier, fields } },
      { action: 'set-current-schema', 'schema-id': -1 }
    ]
  }
}

function schemaOf (fields: JField[]): Schema {
  const { schema, issues } = parseSchema({ type: 'struct', fields })
  if (schema === undefined) throw new Error(JSON.stringify(issues))
  return schema
}

t.test('legal evolution steps never give an error finding', async t => {
  fc.assert(fc.property(fc.gen(), g => {
    const table = randomTable(g)
    const fields = structuredClone(table.fields)
    const state = { last: table.last }
    const steps = g(fc.array, fc.constantFrom<Step>('add', 'rename', 'reorder', 'widen', 'drop', 'optional'), { minLength: 1, maxLength: 8 })
    let applied = 0
    for (const step of steps) if (legalStep(g, table, fields, step, state)) applied++
    fc.pre(applied > 0)
    const ev = evaluateCommit({ base: table.meta, request: commit(fields, table.identifier), settings: SPEC_ONLY_SETTINGS })
    if (ev.changes.length === 0) return // the steps cancelled out: nothing to judge
    if (ev.verdict !== 'allow') throw new Error(`${steps.join(',')}: ${ev.explanation}`)
  }), { numRuns: 300, endOnFailure: true })
  t.pass('300 random evolutions allowed')
})

t.test('one illegal step gives a finding of the right rule', async t => {
  const seen = new Set<string>()
  fc.assert(fc.property(fc.gen(), fc.constantFrom(...ILLEGAL), (g, step) => {
    const table = randomTable(g)
    const fields = structuredClone(table.fields)
    const state = { last: table.last }
    const before = g(fc.array, fc.constantFrom<Step>('add', 'rename', 'reorder', 'widen', 'optional'), { maxLength: 3 })
    for (const s of before) legalStep(g, table, fields, s, state)
    fc.pre(illegalStep(g, table, fields, step, state))
    const ev = evaluateCommit({ base: table.meta, request: commit(fields, table.identifier), settings: SPEC_ONLY_SETTINGS })
    const expected = EXPECTED[step]
    if (!ev.findings.some(f => f.rule === expected && f.severity === 'error')) throw new Error(`${step}: expected ${expected}, got ${ev.explanation}`)
    if (ev.verdict !== 'deny') throw new Error(`${step}: not denied`)
    seen.add(step)
  }), { numRuns: 400, endOnFailure: true })
  t.same([...seen].sort(), [...ILLEGAL].sort(), 'every illegal step was exercised')
})

t.test('diff(s, s) is empty and a rename never shows as drop plus add', async t => {
  fc.assert(fc.property(fc.gen(), g => {
    const table = randomTable(g)
    const s = schemaOf(table.fields)
    if (diffSchemas(s, schemaOf(structuredClone(table.fields))).length !== 0) throw new Error('diff(s, s) not empty')
    const renamed = structuredClone(table.fields)
    const all = slots(renamed)
    const count = g(fc.integer, { min: 1, max: all.length })
    const picked = new Set<number>()
    for (let i = 0; i < count; i++) {
      const slot = pickOne(g, all)
      if (picked.has(slot.field.id)) continue
      picked.add(slot.field.id)
      slot.field.name = `${slot.field.name}_renamed`
    }
    const changes = diffSchemas(s, schemaOf(renamed))
    if (changes.some(c => c.kind !== 'field-renamed')) throw new Error(`rename shown as ${changes.map(c => c.kind).join(',')}`)
    if (changes.length !== picked.size) throw new Error(`one rename change per renamed field: ${JSON.stringify(changes)} ${JSON.stringify([...picked])} ${JSON.stringify(renamed)}`)
  }), { numRuns: 300, endOnFailure: true })
  t.pass('300 random schemas')
})

/** Every field, list element and map key/value in pre-order, walked recursively from the JSON. */
interface RefEntry { id: number, name: string, path: string, parentId?: number, index: number, required: boolean, descendants: number }
function referenceWalk (fields: JField[]): RefEntry[] {
  const out: RefEntry[] = []
  const visit = (id: number, name: string, prefix: string, parentId: number | undefined, index: number, required: boolean, type: JType): void => {
    const path = prefix === '' ? name : `${prefix}.${name}`
    const entry: RefEntry = { id, name, path, ...(parentId === undefined ? {} : { parentId }), index, required, descendants: 0 }
    out.push(entry)
    const before = out.length
    children(type, path, id)
    entry.descendants = out.length - before
  }
  const children = (type: JType, prefix: string, parentId: number | undefined): void => {
    if (typeof type === 'string') return
    if (type.type === 'struct') type.fields.forEach((f, i) => visit(f.id, f.name, prefix, parentId, i, f.required, f.type))
    else if (type.type === 'list') visit(type['element-id'], 'element', prefix, parentId, 0, type['element-required'], type.element)
    else {
      visit(type['key-id'], 'key', prefix, parentId, 0, true, type.key)
      visit(type['value-id'], 'value', prefix, parentId, 1, type['value-required'], type.value)
    }
  }
  children({ type: 'struct', fields }, '', undefined)
  return out
}

t.test('the schema index agrees with a recursive walk: positions, objects, ids, paths and subtrees', async t => {
  fc.assert(fc.property(fc.gen(), g => {
    const table = randomTable(g)
    const index = indexSchema(schemaOf(table.fields))
    const ref = referenceWalk(table.fields)
    if (index.size !== ref.length || index.fields.length !== ref.length) throw new Error(`size ${index.size} vs ${ref.length}`)
    ref.forEach((r, pos) => {
      const f = index.at(pos)
      const parent = index.parentAt(pos)
      const got = { id: index.idAt(pos), name: index.nameAt(pos), path: index.pathAt(pos), parentId: parent < 0 ? undefined : index.idAt(parent), index: index.indexAt(pos), required: index.requiredAt(pos) }
      const viaObject = { id: f.id, name: f.name, path: f.path, parentId: f.parentId, index: f.index, required: f.required }
      const want = { id: r.id, name: r.name, path: r.path, parentId: r.parentId, index: r.index, required: r.required }
      if (JSON.stringify(got) !== JSON.stringify(want) || JSON.stringify(viaObject) !== JSON.stringify(want)) throw new Error(`at ${pos}: ${JSON.stringify(got)} / ${JSON.stringify(viaObject)} vs ${JSON.stringify(want)}`)
      if (index.positionOf(r.id) !== pos || index.byId.get(r.id) !== f || index.fields[pos] !== f) throw new Error(`id ${r.id} is not found at ${pos}`)
      if ((index.fieldAt(pos) === undefined) !== (['element', 'key', 'value'].includes(r.name) && f.field === undefined)) throw new Error(`field at ${pos}`)
      if (index.typeAt(pos) !== f.type) throw new Error(`type at ${pos}`)
      // Pre-order: a field's descendants are exactly the positions after it whose parent lies within.
      let end = pos + 1
      while (end < index.size && index.parentAt(end) >= pos) end++
      if (end - pos - 1 !== r.descendants) throw new Error(`subtree of ${r.path}: ${end - pos - 1} vs ${r.descendants}`)
    })
    if (index.byPath.size !== ref.length || ref.some(r => index.byPath.get(r.path) !== r.id)) throw new Error('byPath')
    const highest = Math.max(0, ...ref.map(r => r.id))
    if (index.highestId !== highest) throw new Error(`highest ${index.highestId} vs ${highest}`)
  }), { numRuns: 300, endOnFailure: true })
  t.pass('300 random nested schemas')
})
