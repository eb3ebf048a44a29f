/**
 * Shared reading of a RuleContext for platform rules: which fields are new, which went away
 * (with everything nested in them), and the shared explanation of the name-reuse trap.
 */
import type { Change, SchemaChange } from '../../diff/schema-change.js'
import { indexSchema, type IndexedField, type SchemaIndex } from '../../../iceberg/schema-index.js'
import type { RuleContext } from '../rule.js'

type ChangeOf<K extends SchemaChange['kind']> = Extract<SchemaChange, { kind: K }>

export function changesOf<K extends SchemaChange['kind']> (changes: readonly Change[], kind: K): Array<ChangeOf<K>> {
  return changes.filter((c): c is ChangeOf<K> => c.kind === kind)
}

/** A create has no base: every column of the proposed schema is new. */
export function isNewTable (ctx: RuleContext): boolean {
  return ctx.flow === 'create' || ctx.flow === 'staged-create' || ctx.baseSchema === undefined
}

/** List elements and map keys/values: ids of their own, but not columns anyone names. */
export function isPseudoField (f: IndexedField): boolean {
  return f.field === undefined
}

/**
 * The field and every field nested in it. The index is in pre-order, so they are the positions
 * right after the field's own, up to the first one whose parent lies before it.
 */
export function subtree (index: SchemaIndex, id: number): IndexedField[] {
  const root = index.positionOf(id)
  if (root < 0) return []
  const out = [index.at(root)]
  for (let pos = root + 1; pos < index.size && index.parentAt(pos) >= root; pos++) out.push(index.at(pos))
  return out
}

/**
 * Fields this commit adds, nested ones included (the diff reports only the top-most new field).
 * On a create, every field of the proposed schema.
 */
export function addedFields (ctx: RuleContext): IndexedField[] {
  const index = indexSchema(ctx.proposedSchema)
  if (isNewTable(ctx)) return [...index.fields]
  const out: IndexedField[] = []
  for (const c of changesOf(ctx.changes, 'field-added')) out.push(...subtree(index, c.fieldId))
  return out
}

/** Fields this commit removes, nested ones included, as they were in the base schema. */
export function droppedFields (ctx: RuleContext): IndexedField[] {
  if (ctx.baseSchema === undefined) return []
  const index = indexSchema(ctx.baseSchema)
  const out: IndexedField[] = []
  for (const c of changesOf(ctx.changes, 'field-dropped')) out.push(...subtree(index, c.fieldId))
  return out
}

/** Depth of a field counted in named columns: `a.b.c` is 3, `items.element.sku` is 2. */
export function columnDepth (f: IndexedField, index: SchemaIndex): number {
  let depth = 0
  let cur: IndexedField | undefined = f
  while (cur !== undefined) {
    if (!isPseudoField(cur)) depth++
    cur = cur.parentId === undefined ? undefined : index.byId.get(cur.parentId)
  }
  return depth
}

/** Spark, Trino and Hive resolve names case-insensitively by default, so `Amount` and `amount` are one name to them. */
export function nameKey (path: string, caseSensitive: boolean): string {
  return caseSensitive ? path : path.toLowerCase()
}

/** Why re-adding a name is a trap; shared by DROP_THEN_ADD_SAME_NAME and DROPPED_NAME_REUSED. */
export function nameReuseExplanation (name: string, newId: number, oldId: number): string {
  return `Why it is not a rename: Iceberg identifies a column by its field id, not its name, and the new ${name} (id ${newId}) ` +
    `is a different column from the old ${name} (id ${oldId}). The new column is empty (null) for every row written ` +
    `before it was added; the old values stay with the dropped id and no reader will show them under ${name}. ` +
    'Readers and jobs that resolve columns by name silently switch to the empty column. ' +
    `Do instead: rename the old column (for example to ${name}__legacy), add the new one, and backfill it from the old ` +
    `one (UPDATE … SET ${name} = CAST(${name}__legacy AS …)); drop the legacy column once consumers have moved.`
}

/** Options read defensively: the policy validated them, but a dry-run may pass anything. */
export function numberOption (options: Readonly<Record<string, unknown>>, key: string, fallback: number): number {
  const v = options[key]
  return typeof v === 'number' && Number.isFinite(v) ? v : fallback
}

export function booleanOption (options: Readonly<Record<string, unknown>>, key: string, fallback: boolean): boolean {
  const v = options[key]
  return typeof v === 'boolean' ? v : fallback
}

export function stringListOption (options: Readonly<Record<string, unknown>>, key: string, fallback: readonly string[]): readonly string[] {
  const v = options[key]
  return Array.isArray(v) && v.every(x => typeof x === 'string') ? v : fallback
}

/** Checks that an option holds a compilable regular expression. */
export function regexProblem (options: Readonly<Record<string, unknown>>, key: string): Array<{ key: string, message: string }> {
  const v = options[key]
  if (typeof v !== 'string') return []
  try {
    // eslint-disable-next-line no-new
    new RegExp(v)
    return []
  } catch (err) {
    return [{ key, message: `not a valid regular expression: ${(err as Error).message}` }]
  }
}
