import type { Change, SchemaChange } from '../../diff/schema-change.js'
import { indexSchema } from '../../../iceberg/schema-index.js'
import type { Schema } from '../../../iceberg/types.js'
import type { DependentView, ReadColumn } from '../../../iceberg/view-reads.js'
import type { RuleContext, Violation } from '../rule.js'
import type { PlatformRule } from './platform-rule.js'
import { droppedFields, subtree } from './support.js'

type Breaking = Extract<SchemaChange, { kind: 'field-renamed' | 'field-dropped' | 'field-moved' }>

/**
 * A view stores SQL that names columns; Iceberg resolves by field id, SQL by name. Renaming,
 * dropping or moving a column a view reads makes the view fail for every reader on its next query,
 * though the catalog accepted the commit (docs/view-index.md). One finding per view, naming the
 * view, its dialects, the columns and the names the view would have to use instead. On a view
 * commit, a column the table does not have is reported the same way: the view is broken as written.
 */
export const VIEW_REFERENCES_COLUMN: PlatformRule = {
  id: 'VIEW_REFERENCES_COLUMN',
  category: 'platform',
  purpose: 'Reports a change that breaks a view of the catalog: a column a view reads renamed, dropped or moved, or a view reading a column its table lacks.',
  defaultSeverity: 'warn',
  flows: ['update', 'revert', 'replace', 'view'],
  * check (ctx) {
    if (ctx.flow === 'view') {
      yield * missingReads(ctx)
      return
    }
    const breaking = ctx.changes.filter((c): c is Breaking => c.kind === 'field-renamed' || c.kind === 'field-dropped' || c.kind === 'field-moved')
    if (breaking.length === 0) return
    // A dropped struct takes its nested fields with it: a view reading `address.city` breaks too.
    const droppedIds = new Set(droppedFields(ctx).map(f => f.id))
    for (const view of ctx.dependents ?? []) {
      const hits = breaking.filter(c => touches(view, c, droppedIds))
      if (hits.length === 0) continue
      yield finding(view, hits)
    }
  }
}

function touches (view: DependentView, change: Breaking, droppedIds: ReadonlySet<number>): boolean {
  // An unparsed view, or one that selects `*`, reads every column: any of these changes its output.
  if (view.star || !view.parsed) return true
  return view.columns.some(col => readsField(col, change, droppedIds))
}

function readsField (col: ReadColumn, change: Breaking, droppedIds: ReadonlySet<number>): boolean {
  if (col.pathIds !== undefined && col.pathIds.length > 0) {
    if (col.pathIds.includes(change.fieldId)) return true
    return change.kind === 'field-dropped' && col.pathIds.some(id => droppedIds.has(id))
  }
  // Not resolved at index time: compared by name as the engines do.
  const old = change.kind === 'field-dropped' ? change.path : change.oldPath
  const name = col.name.toLowerCase()
  const o = old.toLowerCase()
  return name === o || name.startsWith(`${o}.`)
}

function finding (view: DependentView, hits: readonly Breaking[]): Violation {
  const name = [...view.namespace, view.name].join('.')
  const dialects = view.dialects.length > 0 ? view.dialects.join(', ') : 'no SQL dialect'
  const why = !view.parsed
    ? ' (its SQL could not be parsed, so it is taken to read every column of the tables it names)'
    : view.star ? ' (it selects *, so its output changes)' : ''
  const needs = hits.filter(c => c.kind !== 'field-dropped').map(c => c.path)
  const first = hits[0] as Breaking
  return {
    rule: 'VIEW_REFERENCES_COLUMN',
    message: `Cannot ${hits.map(action).join(', ')}: view ${name} (${dialects}) reads ${hits.length > 1 ? 'them' : 'it'}${why}` +
      (needs.length > 0 ? `; the view would need to read ${needs.join(', ')} instead` : ''),
    fieldId: first.fieldId,
    path: first.kind === 'field-dropped' ? first.path : first.oldPath,
    explanation: `View ${name} names these columns in its SQL; Iceberg resolves columns by field id, but the view's SQL resolves them by name and fails on its next query. ` +
      'Replace the view (CREATE OR REPLACE VIEW with the new names) in the same change window, or keep the old column until it has moved; GET /admin/v1/namespaces/{ns}/tables/{t}/dependents lists every view that reads the table.'
  }
}

function action (c: Breaking): string {
  switch (c.kind) {
    case 'field-renamed': return `rename column ${c.oldPath} (id ${c.fieldId}) to ${c.newName}`
    case 'field-dropped': return `drop column ${c.path} (id ${c.fieldId})`
    case 'field-moved': return `move column ${c.oldPath} (id ${c.fieldId}) to ${c.path}`
  }
}

function * missingReads (ctx: RuleContext): Iterable<Violation> {
  for (const read of ctx.viewReads ?? []) {
    for (const column of read.columns) {
      yield {
        rule: 'VIEW_REFERENCES_COLUMN',
        message: `Cannot write a view that reads column ${column} of table ${read.table}: the table's current schema has no such column`,
        path: column,
        explanation: 'The view would fail on its first query. A column renamed in the table is read by its new name; a dropped one is gone.'
      }
    }
  }
}

/**
 * Dropping (`DELETE …/tables/{t}`) or renaming (`POST …/tables/rename`) a table breaks every view
 * that reads it, whatever columns it reads: one violation per view, judged under this rule's
 * settings like a commit's findings.
 */
export function tableRemovalViolations (views: readonly DependentView[], verb: 'drop' | 'rename', table: string, to?: string): Violation[] {
  return views.map(view => {
    const name = [...view.namespace, view.name].join('.')
    const dialects = view.dialects.length > 0 ? view.dialects.join(', ') : 'no SQL dialect'
    const cols = view.star || !view.parsed ? 'every column' : `columns ${view.columns.map(c => c.fieldId === undefined ? c.name : `${c.name} (field ${c.fieldId})`).join(', ')}`
    return {
      rule: VIEW_REFERENCES_COLUMN.id,
      message: `Cannot ${verb} table ${table}${to !== undefined ? ` to ${to}` : ''}: view ${name} (${dialects}) reads it (${cols})` +
        (to !== undefined ? `; the view would need to read ${to} instead` : ''),
      explanation: `View ${name} names ${table} in its SQL and fails on its next query once the table is ${verb === 'drop' ? 'dropped' : 'renamed'}. ` +
        'Drop or replace the view first, or keep the table until its readers have moved.'
    }
  })
}

/**
 * The views a schema change breaks (a renamed, dropped or moved column they read), as the dry run
 * and `iceguard check` list them beside the findings.
 */
export function viewsBrokenBy (views: readonly DependentView[], changes: readonly Change[], baseSchema: Schema | undefined): DependentView[] {
  const breaking = changes.filter((c): c is Breaking => c.kind === 'field-renamed' || c.kind === 'field-dropped' || c.kind === 'field-moved')
  if (breaking.length === 0) return []
  const index = baseSchema === undefined ? undefined : indexSchema(baseSchema)
  const droppedIds = new Set(index === undefined ? [] : breaking.filter(c => c.kind === 'field-dropped').flatMap(c => subtree(index, c.fieldId).map(f => f.id)))
  return views.filter(view => breaking.some(c => touches(view, c, droppedIds)))
}
