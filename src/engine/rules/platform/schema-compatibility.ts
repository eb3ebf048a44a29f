import type { FormatVersion } from '../../../iceberg/promotion.js'
import { isPromotionAllowed } from '../../../iceberg/promotion.js'
import { typeToString } from '../../../iceberg/print.js'
import { indexSchema, type IndexedField, type SchemaIndex } from '../../../iceberg/schema-index.js'
import type { IcebergType, PrimitiveType, Schema } from '../../../iceberg/types.js'
import type { Violation } from '../rule.js'
import type { PlatformRule } from './platform-rule.js'

/**
 * Schema-registry compatibility levels, defined for Iceberg (docs/policy.md "Compatibility levels").
 * Fields pair by id, as Iceberg readers project by id (spec "Column Projection"):
 *
 * - BACKWARD, the new schema reads data written with the old: every type is the old one or a spec
 *   promotion of it, and a required column existed as required or has an initial-default.
 * - FORWARD, readers still on the old schema read data written with the new: no type changes at
 *   all, no required column dropped, none made optional.
 * - FULL: both. `_TRANSITIVE`: against every schema in the table's history, not only the current.
 *
 * BACKWARD against the current schema is what the spec rules already enforce, so it adds findings
 * only in its transitive form. A transitive finding is reported only when this commit introduces it
 * (the same problem between that old schema and the current one is not repeated), so one old change
 * does not lock a table forever.
 */
type Direction = 'backward' | 'forward'

interface Problem {
  readonly kind: string
  readonly field: IndexedField
  readonly message: string
  readonly oldType?: string
  readonly newType?: string
}

const PRIMITIVE_KINDS = new Set(['struct', 'list', 'map'])
const isPrimitive = (t: IcebergType): t is PrimitiveType => !PRIMITIVE_KINDS.has(t.kind)

function sameKind (a: IcebergType, b: IcebergType): boolean {
  return isPrimitive(a) ? isPrimitive(b) : a.kind === b.kind
}

/**
 * Can data written with `writer` be read with `reader`? Problems from the reader's point of view.
 * With `only`, just the reader's fields with those ids or whose parent has one, in reader order.
 */
function readProblems (reader: Schema, writer: Schema, formatVersion: FormatVersion, direction: Direction, only?: ReadonlySet<number>): Problem[] {
  const r = indexSchema(reader)
  const w = indexSchema(writer)
  const out: Problem[] = []
  const positions = only === undefined ? undefined : positionsOf(r, only)
  const n = positions === undefined ? r.size : positions.length
  for (let k = 0; k < n; k++) {
    const pos = positions === undefined ? k : positions[k] as number
    const at = w.positionOf(r.idAt(pos))
    // Unchanged columns, nearly all of them, are passed over without making objects.
    if (at >= 0 && r.typeAt(pos) === w.typeAt(at) && r.requiredAt(pos) === w.requiredAt(at)) continue
    const f = r.at(pos)
    const old = at < 0 ? undefined : w.at(at)
    if (old === undefined) {
      const hasDefault = f.field?.initialDefault !== undefined && f.field.initialDefault !== null
      // A required column the writer never wrote: only an initial-default fills it (spec "Default values").
      if (f.required && !hasDefault && (f.parentId === undefined || w.byId.has(f.parentId))) {
        out.push({ kind: 'missing-required', field: f, message: direction === 'backward' ? `column ${f.path} (id ${f.id}) is required but data written with schema {s} has no value for it` : `column ${f.path} (id ${f.id}) is required in schema {s} but the new schema no longer has it` })
      }
      continue
    }
    const typeDiffers = !sameKind(old.type, f.type) ||
      (isPrimitive(old.type) && isPrimitive(f.type) && !isPromotionAllowed(old.type, f.type, formatVersion))
    if (typeDiffers) {
      const from = typeToString(old.type)
      const to = typeToString(f.type)
      out.push({
        kind: 'type',
        field: f,
        message: direction === 'backward' ? `column ${f.path} (id ${f.id}) is ${to} but schema {s} wrote ${from}, which cannot be read as ${to}` : `column ${f.path} (id ${f.id}) changes type from ${to} (schema {s}) to ${from}; readers on schema {s} cannot read ${from}`,
        ...(direction === 'backward' ? { oldType: from, newType: to } : { oldType: to, newType: from })
      })
    }
    if (f.required && !old.required) {
      out.push({ kind: 'nullability', field: f, message: direction === 'backward' ? `column ${f.path} (id ${f.id}) is required but was optional in schema {s}, whose data may hold nulls` : `column ${f.path} (id ${f.id}) was required in schema {s} and is now optional; readers on schema {s} do not expect nulls` })
    }
  }
  return out
}

function problems (level: string, oldSchema: Schema, newSchema: Schema, fv: FormatVersion, includeBackward: boolean, only?: ReadonlySet<number>): Problem[] {
  const out: Problem[] = []
  if (includeBackward && (level.startsWith('BACKWARD') || level.startsWith('FULL'))) out.push(...readProblems(newSchema, oldSchema, fv, 'backward', only))
  if (level.startsWith('FORWARD') || level.startsWith('FULL')) out.push(...readProblems(oldSchema, newSchema, fv, 'forward', only))
  return out
}

/** Positions in `index` of the fields with an id in `ids` or a parent with one, ascending. */
function positionsOf (index: SchemaIndex, ids: ReadonlySet<number>): number[] {
  const out: number[] = []
  for (const id of ids) {
    const pos = index.positionOf(id)
    if (pos < 0) continue
    out.push(pos)
    const type = index.typeAt(pos)
    if (type.kind === 'struct') for (const f of type.fields) pushPosition(index, f.id, ids, out)
    else if (type.kind === 'list') pushPosition(index, type.elementId, ids, out)
    else if (type.kind === 'map') { pushPosition(index, type.keyId, ids, out); pushPosition(index, type.valueId, ids, out) }
  }
  return out.sort((a, b) => a - b)
}

function pushPosition (index: SchemaIndex, id: number, ids: ReadonlySet<number>, out: number[]): void {
  if (ids.has(id)) return // pushed as itself
  const pos = index.positionOf(id)
  if (pos >= 0) out.push(pos)
}

/** What of a field the problems above look at: its kind or primitive type, whether required, whether defaulted, its parent. */
function fieldShape (index: SchemaIndex, pos: number): string {
  const type = index.typeAt(pos)
  const field = index.fieldAt(pos)
  const parent = index.parentAt(pos)
  const defaulted = field?.initialDefault !== undefined && field.initialDefault !== null
  return `${isPrimitive(type) ? typeToString(type) : type.kind}|${index.requiredAt(pos) ? 1 : 0}|${defaulted ? 1 : 0}|${parent < 0 ? '' : index.idAt(parent)}`
}

/**
 * Ids whose field differs between the current and the proposed schema (present in one only, or
 * another shape). A problem between an old schema and a field the commit leaves as it was is one
 * the current schema already has, which the transitive check does not repeat, so only these
 * fields (and their children, whose parent may come or go) need to be compared with old schemas.
 */
function changedIds (current: Schema, proposed: Schema): Set<number> {
  const c = indexSchema(current)
  const p = indexSchema(proposed)
  const out = new Set<number>()
  for (let pos = 0; pos < p.size; pos++) {
    const id = p.idAt(pos)
    const at = c.positionOf(id)
    if (at < 0 || (!(p.typeAt(pos) === c.typeAt(at) && p.requiredAt(pos) === c.requiredAt(at) && p.fieldAt(pos) === c.fieldAt(at)) && fieldShape(p, pos) !== fieldShape(c, at))) out.add(id)
  }
  for (let pos = 0; pos < c.size; pos++) if (p.positionOf(c.idAt(pos)) < 0) out.add(c.idAt(pos))
  return out
}

const problemKey = (p: Problem): string => `${p.kind}:${p.field.id}`

export const SCHEMA_COMPATIBILITY: PlatformRule = {
  id: 'SCHEMA_COMPATIBILITY',
  category: 'platform',
  purpose: 'Enforces the scope\'s compatibility level (NONE, BACKWARD, FORWARD, FULL and their _TRANSITIVE forms) as defined for Iceberg in docs/policy.md.',
  defaultSeverity: 'error',
  flows: ['update', 'revert', 'replace'],
  * check (ctx) {
    const level = typeof ctx.options.level === 'string' ? ctx.options.level : 'NONE'
    if (level === 'NONE' || ctx.baseSchema === undefined || ctx.base === undefined) return
    const fv = ctx.proposed.formatVersion
    const current = ctx.baseSchema
    const seen = new Set<string>()
    const emit = (p: Problem, schemaId: number | undefined): Violation | undefined => {
      const key = problemKey(p)
      if (seen.has(key)) return undefined
      seen.add(key)
      return {
        rule: 'SCHEMA_COMPATIBILITY',
        message: `Cannot commit under compatibility ${level}: ${p.message.replaceAll('{s}', String(schemaId ?? 'current'))}`,
        fieldId: p.field.id,
        path: p.field.path,
        ...(p.oldType !== undefined && { oldType: p.oldType }),
        ...(p.newType !== undefined && { newType: p.newType })
      }
    }
    // Against the current schema: BACKWARD is the spec rules' job already.
    for (const p of problems(level, current, ctx.proposedSchema, fv, false)) {
      const v = emit(p, current.schemaId)
      if (v) yield v
    }
    if (!level.endsWith('_TRANSITIVE')) return
    for (const [p, schemaId] of transitiveProblems(level, ctx.base.schemas, current, ctx.proposedSchema, fv)) {
      const v = emit(p, schemaId)
      if (v) yield v
    }
  }
}

/**
 * Problems between each old schema and the proposed one that the same old schema does not already
 * have with the current one, in history order, each with the old schema's id. `whole` compares
 * every field (the definition); by default only the fields the commit changes are compared, which
 * gives the same answer in O(history × changed fields) instead of O(history × width). Exported
 * for tests.
 */
export function transitiveProblems (level: string, history: readonly Schema[], current: Schema, proposed: Schema, fv: FormatVersion, whole = false): Array<[Problem, number | undefined]> {
  const out: Array<[Problem, number | undefined]> = []
  const changed = whole ? undefined : changedIds(current, proposed)
  if (changed !== undefined && changed.size === 0) return out
  for (const old of history) {
    if (old === current || (old.schemaId !== undefined && old.schemaId === current.schemaId)) continue
    // Problems that already existed between this old schema and the current one are history, not this commit.
    const already = new Set(problems(level, old, current, fv, true, changed).map(problemKey))
    for (const p of problems(level, old, proposed, fv, true, changed)) {
      if (!already.has(problemKey(p))) out.push([p, old.schemaId])
    }
  }
  return out
}
