/**
 * Evaluates one commit against its base, purely: requirements → apply → flow → diff → rules →
 * decide. The gate, the dry-run API and the CLI all call these two functions; loading the base
 * and answering the client happen elsewhere.
 */
import { diffSchemas } from './diff/schema-diff.js'
import type { Change } from './diff/schema-change.js'
import { summarizeChanges } from './diff/summary.js'
import { applyUpdates, type ApplyIssue, type ApplyResult } from '../iceberg/apply-commit.js'
import { isObject, own, toInt } from '../iceberg/json-values.js'
import { checkRequirements, requirementIssues, type RequirementConflict } from '../iceberg/requirements.js'
import type { Schema, TableMetadata } from '../iceberg/types.js'
import { ALL_RULES } from './rules/index.js'
import type { DependentView, MissingRead } from '../iceberg/view-reads.js'
import type { CommitFlow, Finding, JudgedVerdict, RuleSettings } from './rules/rule.js'
import { runRules } from './rules/run-rules.js'
import { decide, explain } from './decide.js'

export interface Evaluation {
  readonly verdict: JudgedVerdict
  readonly flow: CommitFlow
  readonly conflicts: RequirementConflict[]
  readonly findings: Finding[]
  /** base → proposed current schema; for a create, every top-level field as added. */
  readonly changes: Change[]
  readonly summary: string
  readonly baseSchema?: Schema
  readonly proposedSchema?: Schema
  readonly proposed?: TableMetadata
  /** The commit adds or switches a schema, partition spec or sort order. */
  readonly schemaTouched: boolean
  /** Stands alone as an error message: verdict and every finding (rule id, path, field id, old -> new). */
  readonly explanation: string
}

interface CommitInput {
  readonly base?: TableMetadata
  readonly request: { readonly requirements?: unknown[], readonly updates?: unknown[] }
  readonly settings: RuleSettings
  readonly target?: 'table' | 'view'
  /** Views that read the table (the view index); absent: none known. */
  readonly dependents?: readonly DependentView[]
  /** For a view commit: columns its new version reads that the tables do not have. */
  readonly viewReads?: readonly MissingRead[]
}

interface CreateInput {
  /** A CreateTableRequest body. */
  readonly request: unknown
  readonly settings: RuleSettings
}

const EMPTY_SCHEMA: Schema = { identifierFieldIds: [], struct: { kind: 'struct', fields: [] } }

function currentSchema (m: TableMetadata | undefined): Schema | undefined {
  return m?.schemas.find(s => s.schemaId === m.currentSchemaId)
}

function hasRequirement (requirements: readonly unknown[], type: string): boolean {
  return requirements.some(r => isObject(r) && typeof own(r, 'type') === 'string' && (own(r, 'type') as string).toLowerCase() === type)
}

/**
 * How the commit relates to the table. A replace is Java's CREATE OR REPLACE
 * (`TableMetadata.buildReplacement`, requirements of `UpdateRequirements.forReplaceTable`): a new
 * current schema (add-schema, or set-current-schema alone when the replacement equals a schema the
 * table had) without assert-current-schema-id, and the rows of the main branch go with it:
 * `remove-snapshot-ref main`. Java sends that only when main exists; replacing a table that has no
 * snapshot at all, it pins the table by assert-table-uuid alone, and no row exists to keep. A revert
 * switches to an existing older schema (pyiceberg and Java send exactly that when an evolution
 * equals an old schema).
 */
function detectFlow (base: TableMetadata | undefined, requirements: readonly unknown[], updates: readonly unknown[], applied: ApplyResult, target: 'table' | 'view'): CommitFlow {
  if (target === 'view') return 'view'
  if (hasRequirement(requirements, 'assert-create')) return 'staged-create'
  if (base === undefined) return 'create'
  const actions = updates.filter(isObject).map(u => String(own(u, 'action')).toLowerCase())
  const removesMain = updates.some(u => isObject(u) && String(own(u, 'action')).toLowerCase() === 'remove-snapshot-ref' && own(u, 'ref-name') === 'main')
  const newCurrentSchema = actions.includes('add-schema') || actions.includes('set-current-schema')
  const noRowsKept = removesMain || (Object.keys(base.refs).length === 0 && hasRequirement(requirements, 'assert-table-uuid'))
  if (newCurrentSchema && noRowsKept && !hasRequirement(requirements, 'assert-current-schema-id')) return 'replace'
  const id = applied.proposed.currentSchemaId
  if (id !== base.currentSchemaId && base.schemas.some(s => s.schemaId === id)) return 'revert'
  return 'update'
}

/** Evaluates a CommitTableRequest (or one table-change of a transaction) against its base metadata. */
export function evaluateCommit (input: CommitInput): Evaluation {
  const target = input.target ?? 'table'
  const requirements = Array.isArray(input.request.requirements) ? input.request.requirements : []
  const updates = Array.isArray(input.request.updates) ? input.request.updates : []
  // CommitTableRequest requires `requirements`, so a null there is a 400; CommitViewRequest makes
  // it optional, and Java reads an optional null as absent (UpdateTableRequestParser: hasNonNull).
  const rawRequirements = target === 'view' && input.request.requirements === null ? undefined : input.request.requirements
  const issues: ApplyIssue[] = [...requirementIssues(rawRequirements)]
  if (input.request.updates !== undefined && !Array.isArray(input.request.updates)) {
    issues.push({ at: 'updates', message: `Cannot read updates: ${input.request.updates === null ? 'null (required: an array)' : 'not an array'}` })
  }

  // A view has no table metadata to check table requirements against.
  const conflicts = target === 'view' && input.base === undefined ? [] : checkRequirements(input.base, requirements)
  if (conflicts.length > 0) {
    const { verdict, findings } = decide({ conflicts, findings: [], mode: input.settings.mode, schemaTouched: false })
    return {
      verdict,
      flow: detectFlow(input.base, requirements, updates, applyUpdates(input.base, updates, target), target),
      conflicts,
      findings,
      changes: [],
      summary: 'not evaluated: the commit conflicts with the current table state',
      ...(currentSchema(input.base) === undefined ? {} : { baseSchema: currentSchema(input.base) }),
      schemaTouched: false,
      explanation: explain(verdict, findings, conflicts, 0)
    }
  }

  const applied = applyUpdates(input.base, updates, target)
  issues.push(...applied.issues)
  const flow = detectFlow(input.base, requirements, updates, applied, target)
  return judge({ flow, base: input.base, applied, issues, settings: input.settings, dependents: input.dependents, viewReads: input.viewReads })
}

interface JudgeInput {
  readonly flow: CommitFlow
  readonly base?: TableMetadata
  readonly applied: ApplyResult
  readonly issues: ApplyIssue[]
  readonly settings: RuleSettings
  readonly dependents?: readonly DependentView[] | undefined
  readonly viewReads?: readonly MissingRead[] | undefined
}

function judge ({ flow, base, applied, issues, settings, dependents, viewReads }: JudgeInput): Evaluation {
  const creating = flow === 'create' || flow === 'staged-create'
  const baseSchema = creating ? undefined : currentSchema(base)
  let proposedSchema = currentSchema(applied.proposed)
  if (proposedSchema === undefined) {
    if (creating && issues.length === 0) issues.push({ at: 'updates', message: 'Cannot create table: no current schema (add-schema and set-current-schema are required)' })
    proposedSchema = EMPTY_SCHEMA
  }
  const changes = baseSchema === undefined ? [] : diffSchemas(baseSchema, proposedSchema)
  const findings = runRules(ALL_RULES, {
    flow,
    ...(base === undefined || creating ? {} : { base }),
    proposed: applied.proposed,
    ...(baseSchema === undefined ? {} : { baseSchema }),
    proposedSchema,
    changes,
    addedSchemas: applied.addedSchemas,
    issues,
    ...(dependents !== undefined && { dependents }),
    ...(viewReads !== undefined && { viewReads })
  }, settings)
  const schemaTouched = applied.addedSchemas.length > 0 || applied.currentSchemaChanged || applied.specChanged || applied.sortOrderChanged
  const decision = decide({ conflicts: [], findings, mode: settings.mode, schemaTouched })
  // A create has no base to diff against; show its columns as added so the summary says what it makes.
  const shown = creating && proposedSchema !== EMPTY_SCHEMA ? diffSchemas(EMPTY_SCHEMA, proposedSchema) : changes
  return {
    verdict: decision.verdict,
    flow,
    conflicts: [],
    findings: decision.findings,
    changes: shown,
    summary: summarizeChanges(shown),
    ...(baseSchema === undefined ? {} : { baseSchema }),
    proposedSchema,
    proposed: applied.proposed,
    schemaTouched,
    explanation: explain(decision.verdict, decision.findings, [], shown.length)
  }
}

/**
 * Evaluates a CreateTableRequest as the updates Java's create path applies to an empty table
 * (`createChanges`: format version, schema, spec, sort order, location, properties).
 */
export function evaluateCreate (input: CreateInput): Evaluation {
  const req = input.request
  const issues: ApplyIssue[] = []
  if (!isObject(req)) {
    issues.push({ at: '', message: 'Cannot create table: request body must be a JSON object' })
    return judge({ flow: 'create', applied: applyUpdates(undefined, []), issues, settings: input.settings })
  }
  // Members are read as Jackson reads them into Java's CreateTableRequest bean (the clients' own
  // serialiser, RESTObjectMapper, writes every unset member as null): a null optional member is
  // absent (location, partition-spec, write-order, properties), a null required one is a 400
  // (name, schema), and so is a null stage-create, which the bean's validate() refuses.
  const name = own(req, 'name')
  if (typeof name !== 'string' || name.length === 0) issues.push({ at: 'name', message: `Cannot create table: name ${name === null ? 'is null (required: a non-empty string)' : 'must be a non-empty string'}` })
  const props = own(req, 'properties') ?? undefined
  if (props !== undefined && !isObject(props)) issues.push({ at: 'properties', message: 'Cannot create table: properties must be an object of strings' })
  const stage = own(req, 'stage-create')
  if (stage !== undefined && typeof stage !== 'boolean') issues.push({ at: 'stage-create', message: `Cannot create table: stage-create ${stage === null ? 'is null (Java refuses it: "Invalid stageCreate flag: null")' : 'must be a boolean'}` })
  const rawVersion = isObject(props) ? own(props, 'format-version') : undefined
  const version = rawVersion === undefined ? 2 : toInt(typeof rawVersion === 'string' && /^\d+$/.test(rawVersion) ? Number(rawVersion) : rawVersion)
  if (version !== 1 && version !== 2 && version !== 3) issues.push({ at: 'properties.format-version', message: `Cannot create table: unsupported format-version ${String(rawVersion)}` })
  const schema = own(req, 'schema') ?? undefined
  if (schema === undefined) issues.push({ at: 'schema', message: `Cannot create table: schema is ${own(req, 'schema') === null ? 'null (required)' : 'missing'}` })

  // Paths of synthesized updates map back to the request's own keys.
  const updates: unknown[] = []
  const origin: string[] = []
  const add = (u: unknown, from: string): void => { updates.push(u); origin.push(from) }
  add({ action: 'upgrade-format-version', 'format-version': version === 1 || version === 3 ? version : 2 }, 'properties.format-version')
  if (schema !== undefined) {
    add({ action: 'add-schema', schema }, '')
    add({ action: 'set-current-schema', 'schema-id': -1 }, 'schema')
  }
  add({ action: 'add-spec', spec: own(req, 'partition-spec') ?? { 'spec-id': 0, fields: [] } }, 'partition-spec')
  add({ action: 'set-default-spec', 'spec-id': -1 }, 'partition-spec')
  add({ action: 'add-sort-order', 'sort-order': own(req, 'write-order') ?? { 'order-id': 0, fields: [] } }, 'write-order')
  add({ action: 'set-default-sort-order', 'sort-order-id': -1 }, 'write-order')
  const location = own(req, 'location') ?? undefined
  if (location !== undefined) add({ action: 'set-location', location }, 'location')
  if (isObject(props)) add({ action: 'set-properties', updates: props }, 'properties')

  const applied = applyUpdates(undefined, updates)
  for (const issue of applied.issues) {
    const m = /^updates\[(\d+)\]\.?(.*)$/.exec(issue.at)
    const from = m === null ? undefined : origin[Number(m[1])]
    // "updates[1].schema.fields[0]" → "schema.fields[0]"; "updates[3].spec.fields" → "partition-spec.fields".
    const rest = m?.[2]?.replace(/^(spec|sort-order|updates|location)(?=\.|$)\.?/, '') ?? ''
    const at = from === undefined ? issue.at : from === '' ? rest : rest === '' ? from : `${from}.${rest}`
    issues.push({ ...issue, at })
  }
  return judge({ flow: 'create', applied, issues, settings: input.settings })
}
