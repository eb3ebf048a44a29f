/**
 * `POST /admin/v1/validate`: a dry run of a commit. The request is what a client would send to
 * updateTable (with the table named beside it) or to commitTransaction; the answer is the gate's
 * decision in full: verdict, every finding, the changes by field id and a readable explanation.
 */
import { Type, type Static } from '@sinclair/typebox'
import type { Change } from '../engine/diff/schema-change.js'
import type { Finding, JudgedVerdict } from '../engine/rules/rule.js'
import { changeToWire, SchemaChangeSchema } from './change.js'
import { FindingSchema, findingToWire } from './finding.js'
import { CommitTableRequestSchema, CommitTransactionRequestSchema, TableIdentifierSchema, TableMetadataJsonSchema } from './iceberg-rest.js'
import { ref } from './ref.js'
import { tableName } from '../iceberg/rest-path.js'
import type { Schema } from '../iceberg/types.js'
import type { DependentView } from '../iceberg/view-reads.js'
import { viewsBrokenBy } from '../engine/rules/platform/view-references-column.js'
import { DependentViewSchema, dependentToWire } from './view-index.js'

export const VerdictSchema = Type.Union([Type.Literal('allow'), Type.Literal('warn'), Type.Literal('deny'), Type.Literal('conflict')], {
  $id: 'Verdict',
  description: 'allow: would be forwarded. warn: forwarded, with warnings. deny: refused with 400. conflict: the base the request asserts is not the table\'s (409).'
}) satisfies { static: JudgedVerdict }

export const CommitFlowSchema = Type.Union(
  ['update', 'revert', 'create', 'staged-create', 'replace', 'view'].map(f => Type.Literal(f)),
  { $id: 'CommitFlow', description: 'How the commit relates to the table.' })

export const ValidateRequestSchema = Type.Object({
  table: Type.Optional(ref(TableIdentifierSchema, { description: 'The table a CommitTableRequest is for; defaults to the request\'s `identifier`.' })),
  request: Type.Union([ref(CommitTableRequestSchema), ref(CommitTransactionRequestSchema)], { description: 'A CommitTableRequest (updateTable body) or a CommitTransactionRequest.' }),
  metadata: Type.Optional(ref(TableMetadataJsonSchema, { description: 'The table\'s current metadata. Given: nothing is loaded (offline). Absent: loaded from the upstream with the caller\'s catalog credential.' })),
  prefix: Type.Optional(Type.String({ description: 'The catalog `{prefix}` path segment to load tables under, when the upstream uses one.' }))
}, {
  $id: 'ValidateRequest',
  additionalProperties: false,
  examples: [{
    table: { namespace: ['db'], name: 'orders' },
    request: {
      requirements: [{ type: 'assert-current-schema-id', 'current-schema-id': 0 }],
      updates: [
        { action: 'add-schema', schema: { type: 'struct', 'schema-id': 1, fields: [{ id: 1, name: 'id', required: true, type: 'long' }] } },
        { action: 'set-current-schema', 'schema-id': -1 }
      ]
    }
  }]
})

/** A verified break-glass override as every answer shows it (src/gate/override.ts `overrideToWire`). */
export const OverrideAppliedSchema = Type.Object({
  id: Type.String({ description: 'The token id, as the audit line records it.' }),
  table: Type.String({ description: 'The dotted table the token is for.' }),
  rules: Type.Array(Type.String(), { description: 'The rules whose errors it turns into warnings (marked `overridden` in `findings`).' }),
  reason: Type.String({ description: 'Why it was minted; the audit line of the commit records it.' }),
  'expires-at': Type.String({ description: 'When the token stops verifying (ISO 8601).' })
}, {
  $id: 'OverrideApplied',
  additionalProperties: false,
  description: 'The break-glass override the request\'s X-Iceguard-Override header carried, verified and applied exactly as the gate applies it.'
})

const tableResultProps = {
  verdict: ref(VerdictSchema),
  flow: Type.Optional(ref(CommitFlowSchema)),
  findings: Type.Array(ref(FindingSchema), { description: 'Every finding, errors and warnings; the gate never stops at the first.' }),
  changes: Type.Array(ref(SchemaChangeSchema), { description: 'Schema changes by field id.' }),
  summary: Type.String({ description: 'The changes, one line each.' }),
  explanation: Type.String({ description: 'Why the verdict is what it is, for people.' }),
  conflicts: Type.Optional(Type.Array(Type.String(), { description: 'Requirements that do not hold against the table (verdict conflict).' })),
  'affected-views': Type.Optional(Type.Array(ref(DependentViewSchema), {
    description: 'Views of the catalog the change would break: they read a column it renames, drops or moves (the view index, docs/view-index.md). Absent when none.'
  }))
}

export const TableValidationSchema = Type.Object({
  table: ref(TableIdentifierSchema),
  ...tableResultProps
}, { $id: 'TableValidation', additionalProperties: false })

export const ValidateResponseSchema = Type.Object({
  table: Type.Optional(ref(TableIdentifierSchema)),
  ...tableResultProps,
  override: Type.Optional(ref(OverrideAppliedSchema)),
  tables: Type.Optional(Type.Array(ref(TableValidationSchema), { description: 'For a transaction: the result per table. The verdict above is the worst of them (all-or-nothing).' }))
}, { $id: 'ValidateResponse', additionalProperties: false })

export type ValidateResponse = Static<typeof ValidateResponseSchema>
export type TableValidation = Static<typeof TableValidationSchema>
/** The parts of the engine's Evaluation the wire form carries. */
interface EvaluationView {
  readonly verdict: JudgedVerdict
  readonly flow?: string
  readonly findings: readonly Finding[]
  readonly changes: readonly Change[]
  readonly summary: string
  readonly explanation: string
  readonly conflicts?: readonly { readonly type: string, readonly message: string }[]
  /** The views that read the table (the view index), when known. */
  readonly dependents?: readonly DependentView[]
  readonly baseSchema?: Schema
}

function affectedViews (e: EvaluationView): DependentView[] {
  return e.dependents === undefined ? [] : viewsBrokenBy(e.dependents, e.changes, e.baseSchema)
}

/** One table's evaluation in wire form. */
export function evaluationToWire (e: EvaluationView): Omit<TableValidation, 'table'> {
  const out: Omit<TableValidation, 'table'> = {
    verdict: e.verdict,
    findings: e.findings.map(findingToWire),
    changes: e.changes.map(changeToWire),
    summary: e.summary,
    explanation: e.explanation
  }
  if (e.flow !== undefined) out.flow = e.flow
  if (e.conflicts !== undefined && e.conflicts.length > 0) out.conflicts = e.conflicts.map(c => `${c.type}: ${c.message}`)
  const affected = affectedViews(e)
  if (affected.length > 0) out['affected-views'] = affected.map(dependentToWire)
  return out
}

const RANK: Readonly<Record<JudgedVerdict, number>> = { allow: 0, warn: 1, conflict: 2, deny: 3 }

/**
 * A transaction is all-or-nothing: its verdict is the worst of its tables (deny before conflict,
 * as the gate refuses before it reports a stale base).
 */
export function transactionToWire (tables: readonly TableValidation[]): ValidateResponse {
  const worst = tables.reduce<JudgedVerdict>((w, t) => RANK[t.verdict] > RANK[w] ? t.verdict : w, 'allow')
  const name = (t: TableValidation): string => tableName(t.table)
  const findings = tables.flatMap(t => t.findings.map(f => ({ ...f, message: `${name(t)}: ${f.message}` })))
  return {
    verdict: worst,
    findings,
    changes: [],
    summary: tables.map(t => `${name(t)}: ${t.summary}`).join('\n'),
    explanation: tables.length === 1
      ? (tables[0] as TableValidation).explanation
      : `Transaction of ${tables.length} tables: ${worst}. ${tables.map(t => `${name(t)}: ${t.verdict}`).join('; ')}.`,
    tables: [...tables]
  }
}
