/**
 * The decision half of the gate (a policy decision point, as OPA and Envoy's ext_authz split it):
 * pure functions from a classified write, its body, the tables' base metadata and the effective
 * settings to a `Decision` — the verdict, the findings, the answer when the write is refused and
 * the requirements to add when it goes ahead. Nothing here sends, waits or logs; `commit-gate.ts`
 * loads the bases, enforces the decision and writes the audit line.
 *
 *   readWrite(kind, ident, body)            → which tables, and what each change asks for
 *   judgeChange(write, entry, base, grant)  → one change judged against its base
 *   decideWrite(write, judged, config)      → the verdict over all changes (all-or-nothing)
 *
 * Status codes are chosen for what Java, PyIceberg and Rust clients do next: a
 * finding is a 400 (clean failure, never retried), a requirement that no longer holds a 409.
 */
import type { DecidedTable } from '../audit/audit-log.js'
import { isObject } from '../iceberg/json-values.js'
import { readTableIdentifier, sameTable, tableName, type TableRef } from '../iceberg/rest-path.js'
import type { ParseIssue, TableMetadata } from '../iceberg/types.js'
import { parseViewVersion } from '../iceberg/view-metadata.js'
import type { Finding, RuleSettings, Verdict } from '../engine/rules/rule.js'
import { settle } from '../engine/rules/run-rules.js'
import { tableRemovalViolations, VIEW_REFERENCES_COLUMN } from '../engine/rules/platform/view-references-column.js'
import type { DependentView, MissingRead } from '../iceberg/view-reads.js'
import { ERRORS } from '../errors.js'
import { evaluateCommit, evaluateCreate, type Evaluation } from '../engine/evaluate-commit.js'
import { answer, conflict, rejection, type GateAnswer } from './gate-answers.js'
import type { GateConfig, GatedKind, GateIdent, RegistrationCheck } from './gate-types.js'
import { describeRequirement, missingRequirements, type MissingRequirement } from './inject-requirements.js'
import { evaluateUnder, grantFor, type OverrideGrant } from './override.js'
import type { JsonPath } from '../json/splice-requirements.js'

type JsonBody = Readonly<Record<string, unknown>>

/** One change of a write: its table, its request object and where that object sits in the body. */
export interface WriteEntry {
  readonly table: TableRef
  readonly request: JsonBody
  readonly at: JsonPath
}

/**
 * A write read far enough to know what it touches. `judge` says how its changes are judged:
 * against each table's base (`base`), as a new table (`create`), as view metadata (`view`, no
 * base), or not at all before it is forwarded (`register`: the metadata file lives in storage the
 * gate does not read).
 */
export interface Write {
  readonly kind: GatedKind
  readonly judge: 'base' | 'create' | 'view' | 'register'
  readonly entries: readonly WriteEntry[]
  /** A break-glass override applies (the header is read for these tables). */
  readonly overridable: boolean
}

/** A write refused before any base was needed. */
interface EarlyRefusal {
  readonly refusal: GateAnswer
  /** The tables the write named, when it named them. */
  readonly tables: readonly TableRef[]
  readonly flows: readonly string[]
}

/** One change judged against the base it was judged on. */
export interface JudgedChange extends WriteEntry {
  readonly base?: TableMetadata
  readonly evaluation: Evaluation
  readonly override?: OverrideGrant
  /** Requirements that pin what was validated, missing from the request. */
  readonly missing: readonly MissingRequirement[]
}

/** Requirements to splice into the forwarded body at one request object. */
export interface Injection {
  readonly at: JsonPath
  readonly requirements: readonly MissingRequirement[]
}

/** What the enforcement needs to act, and what the audit line records. */
export interface Decision {
  /** `refused`: the write is not judged on its merits (a requirement the gate demands is absent, registration is off). */
  readonly verdict: Verdict
  /** The answer to send instead of forwarding; present exactly when the verdict is deny, conflict or refused. */
  readonly refusal?: GateAnswer
  /** Requirements to add before forwarding (race safety, `inject-requirements.ts`). */
  readonly inject: readonly Injection[]
  /** Findings let through, for the warnings header. */
  readonly warnings: ReadonlyArray<{ readonly table?: string, readonly finding: Finding }>
  readonly flows: readonly string[]
  /** Ids of the rules that found something. */
  readonly rules: readonly string[]
  readonly summary: string
  /** `table:requirement` labels of `inject`, for the audit line. */
  readonly injected: readonly string[]
  readonly override?: OverrideGrant
  /** Each judged table's findings and diff summary, for the decision log. */
  readonly decided: readonly DecidedTable[]
}

/**
 * Reads what a write touches, or refuses it when the body does not name its tables the way the
 * REST spec requires. `body` is the request's JSON object.
 */
export function readWrite (kind: GatedKind, ident: GateIdent, body: JsonBody): { readonly write: Write } | EarlyRefusal {
  switch (kind) {
    case 'update-table': return readTableCommit(kind, ident, body)
    case 'transaction': return readTransaction(kind, ident, body)
    case 'create-table': return readNamed(kind, ident, body, 'create', 'Cannot create table: the request has no name')
    case 'register-table': return readRegister(kind, ident, body, 'table')
    case 'register-view': return readRegister(kind, ident, body, 'view')
    case 'update-view': return readView(kind, ident, body, false)
    case 'create-view': return readView(kind, ident, body, true)
    default: return refused(`Cannot read a ${kind} request as a write with content`, [])
  }
}

function readTableCommit (kind: GatedKind, ident: GateIdent, body: JsonBody): { write: Write } | EarlyRefusal {
  const table: TableRef = { prefix: ident.prefix, namespace: ident.namespace, name: ident.table ?? '' }
  const tables = [table]
  // The Java client omits the identifier on single-table commits; when present it must name the
  // path's table. It is optional here, and Java reads a null identifier as absent (hasNonNull).
  if (body.identifier !== undefined && body.identifier !== null) {
    const id = readTableIdentifier(body.identifier)
    if ('problem' in id) {
      return refused(`Cannot commit to ${tableName(table)}: the body's identifier ${id.problem}`, tables)
    }
    // By levels, not dotted names: `a` + `b.t` and `a.b` + `t` print alike but are other tables.
    if (!sameTable(id, table)) {
      return refused(`Cannot commit to ${tableName(table)}: the body's identifier names ${tableName(id)}, not the table in the request path`, tables)
    }
  }
  return { write: { kind, judge: 'base', entries: [{ table, request: body, at: [] }], overridable: true } }
}

function readTransaction (kind: GatedKind, ident: GateIdent, body: JsonBody): { write: Write } | EarlyRefusal {
  const changes = body['table-changes']
  if (!Array.isArray(changes) || changes.length === 0) {
    return refused('Cannot commit transaction: table-changes must be a non-empty array', [])
  }
  const entries: WriteEntry[] = []
  for (const [i, change] of changes.entries()) {
    const id = isObject(change) ? readTableIdentifier(change.identifier) : { problem: 'is missing (the change is not an object)' }
    if (!isObject(change) || 'problem' in id) {
      // Java CommitTransactionRequest.validate(): every change names its table.
      return refused(`Cannot commit transaction: table identifier is required (table-changes[${i}].identifier ${'problem' in id ? id.problem : 'is missing'})`, [])
    }
    entries.push({ table: { prefix: ident.prefix, ...id }, request: change, at: ['table-changes', i] })
  }
  return { write: { kind, judge: 'base', entries, overridable: true } }
}

function readNamed (kind: GatedKind, ident: GateIdent, body: JsonBody, judge: 'create', noName: string): { write: Write } | EarlyRefusal {
  if (typeof body.name !== 'string' || body.name === '') return refused(noName, [])
  const table: TableRef = { prefix: ident.prefix, namespace: ident.namespace, name: body.name }
  return { write: { kind, judge, entries: [{ table, request: body, at: [] }], overridable: true } }
}

function readView (kind: GatedKind, ident: GateIdent, body: JsonBody, create: boolean): { write: Write } | EarlyRefusal {
  const name = create ? body.name : ident.table
  if (typeof name !== 'string' || name === '') {
    return refused(`Cannot create view: the request has no name${body.name === null ? ' (name is null)' : ''}`, [])
  }
  if (create) {
    // CreateViewRequest requires these; Java's parser refuses each when null (JsonUtil.get,
    // getStringMap). `location` is optional and a null there is absent (getStringOrNull).
    const missing = ['schema', 'view-version', 'properties'].filter(k => body[k] === null)
    if (missing.length > 0) {
      return refused(`Cannot create view ${name}: ${missing.join(', ')} ${missing.length > 1 ? 'are' : 'is'} null (required)`, [])
    }
    const version = body['view-version']
    const problems: ParseIssue[] = []
    if (isObject(version)) parseViewVersion(version, 'view-version', problems)
    if (problems.length > 0) {
      return refused(`Cannot create view ${name}: ${problems.map(p => `${p.message} (at ${p.at})`).join('; ')}`, [])
    }
  }
  const table: TableRef = { prefix: ident.prefix, namespace: ident.namespace, name }
  return { write: { kind, judge: 'view', entries: [{ table, request: body, at: [] }], overridable: false } }
}

/**
 * registerTable and registerView point the catalog at a metadata file that already exists in
 * storage the gate does not read, so the gate cannot judge its schemas before the upstream
 * accepts it: the policy decides up front whether registering is allowed here (`decideRegister`).
 */
function readRegister (kind: GatedKind, ident: GateIdent, body: JsonBody, what: 'table' | 'view'): { write: Write } | EarlyRefusal {
  if (typeof body.name !== 'string' || body.name === '') return refused(`Cannot register ${what}: the request has no name`, [])
  const table: TableRef = { prefix: ident.prefix, namespace: ident.namespace, name: body.name }
  const location = body['metadata-location']
  if (typeof location !== 'string' || location === '') {
    // Required by RegisterTableRequest and RegisterViewRequest; `overwrite` is optional and a null there is absent (Java
    // getBoolOrNull; iceberg-rust writes `"overwrite": null` when unset).
    return refused(`Cannot register ${what} ${tableName(table)}: metadata-location ${location === null ? 'is null' : location === undefined ? 'is missing' : 'must be a non-empty string'}`, [table], ['register'])
  }
  return { write: { kind, judge: 'register', entries: [{ table, request: body, at: [] }], overridable: false } }
}

/**
 * Judges one change against its base (`undefined`: the table does not exist yet, or a view).
 * `settings` are the table's effective settings; `grant`, a verified override, applies when it
 * names this table (`evaluateUnder`: its rules' errors become warnings marked `overridden`).
 */
export function judgeChange (write: Write, entry: WriteEntry, base: TableMetadata | undefined, settings: RuleSettings, grant?: OverrideGrant,
  views: ViewFacts = {}): JudgedChange {
  const override = grantFor(grant, entry.table)
  if (write.judge === 'create') {
    const evaluation = evaluateUnder(settings, grant, entry.table, s => evaluateCreate({ request: entry.request, settings: s }))
    return { ...entry, evaluation, ...(override && { override }), missing: [] }
  }
  if (write.judge === 'view') {
    // A view's schema may change freely: only the structure of each schema it carries is checked,
    // so no base is needed (and view metadata is not table metadata); no override applies.
    const body = entry.request
    const request = write.kind === 'create-view'
      ? { requirements: [], updates: body.schema === undefined ? [] : [{ action: 'add-schema', schema: body.schema }] }
      : body
    return { ...entry, evaluation: evaluateCommit({ request, settings, target: 'view', ...(views.viewReads !== undefined && { viewReads: views.viewReads }) }), missing: [] }
  }
  const evaluation = evaluateUnder(settings, grant, entry.table, s => evaluateCommit({
    base, request: entry.request, settings: s, target: 'table', ...(views.dependents !== undefined && { dependents: views.dependents })
  }))
  return { ...entry, base, evaluation, ...(override && { override }), missing: missingRequirements(entry.request, base, evaluation) }
}

/** What the view index says about a change: who reads the table, or what a view version reads that its tables lack. */
export interface ViewFacts {
  readonly dependents?: readonly DependentView[]
  readonly viewReads?: readonly MissingRead[]
}

/** The view version a view write makes current: a create's `view-version`, or a commit's last `add-view-version`. */
export function writtenViewVersion (write: Write): JsonBody | undefined {
  const request = (write.entries[0] as WriteEntry).request
  if (write.kind === 'create-view') return isObject(request['view-version']) ? request['view-version'] : undefined
  if (write.kind !== 'update-view' || !Array.isArray(request.updates)) return undefined
  let version: JsonBody | undefined
  for (const u of request.updates) {
    if (isObject(u) && typeof u.action === 'string' && u.action.toLowerCase() === 'add-view-version' && isObject(u['view-version'])) version = u['view-version']
  }
  return version
}

/** The verdict over every judged change of one write (all-or-nothing), and what enforcing it takes. */
/** `ruleLinks`: the base of the rule links in a refusal (the public URL or the request's origin, `rule-link-base.ts`). */
export function decideWrite (write: Write, judged: readonly JudgedChange[], config: Pick<GateConfig, 'assertions'> & { readonly ruleLinks?: string }): Decision {
  const multi = judged.length > 1
  const flows = unique(judged.map(j => j.evaluation.flow))
  const rules = unique(judged.flatMap(j => j.evaluation.findings.map(f => f.rule)))
  const summary = judged.map(j => multi ? `${tableName(j.table)}: ${j.evaluation.summary}` : j.evaluation.summary).join(' | ')
  const override = judged.find(j => j.override !== undefined)?.override
  const decided = judged.map(j => ({ namespace: j.table.namespace, name: j.table.name, findings: j.evaluation.findings, summary: j.evaluation.summary }))
  // Warnings are recorded whatever the verdict: a denied write's audit line lists them too.
  const warnings = judged.flatMap(j => j.evaluation.findings
    .filter(f => f.severity === 'warn')
    .map(finding => ({ ...(multi && { table: tableName(j.table) }), finding })))
  const base = { flows, rules, summary, decided, injected: [], inject: [], warnings, ...(override !== undefined && { override }) }

  const denied = judged.filter(j => j.evaluation.verdict === 'deny')
  if (denied.length > 0) {
    const refusal = rejection(denied.map(j => ({
      table: tableName(j.table),
      errors: j.evaluation.findings.filter(f => f.severity === 'error')
    })), { docs: config.ruleLinks, nameTables: write.kind === 'transaction' })
    return { ...base, verdict: 'deny', refusal }
  }
  const conflicted = judged.filter(j => j.evaluation.verdict === 'conflict')
  if (conflicted.length > 0) {
    const failed = conflicted.flatMap(j => j.evaluation.conflicts.map(c => ({ table: tableName(j.table), type: c.type, message: c.message })))
    return { ...base, verdict: 'conflict', refusal: conflict(failed) }
  }

  // Requirements the validated values must pin (race safety).
  const missing = judged.filter(j => j.missing.length > 0)
  if (missing.length > 0 && config.assertions === 'require') {
    const demanded = missing.flatMap(j => j.missing.filter(m => m.requiredOfClient).map(m => ({ j, m })))
    if (demanded.length > 0) {
      const lines = demanded.map(({ j, m }) => `${tableName(j.table)}: send ${describeRequirement(m)}`)
      return {
        ...base,
        verdict: 'refused',
        summary: `missing requirement: ${unique(demanded.map(d => d.m.type)).join(', ')}`,
        refusal: answer(ERRORS.BAD_REQUEST,
          `Cannot commit schema change without the requirements that pin the schema it was validated against: ${lines.join('; ')} ` +
          '(this gate is configured to require them, so a concurrent change cannot slip in unchecked)', lines)
      }
    }
  }
  return {
    ...base,
    verdict: warnings.length > 0 ? 'warn' : 'allow',
    inject: missing.map(j => ({ at: j.at, requirements: j.missing })),
    injected: missing.flatMap(j => j.missing.map(m => multi ? `${tableName(j.table)}:${m.type}` : m.type))
  }
}

/**
 * Whether a register request may go ahead in its scope. A refusal is a permission matter:
 * 403 ForbiddenException.
 */
export function decideRegister (write: Write, registration: RegistrationCheck | undefined): Decision {
  const entry = write.entries[0] as WriteEntry
  const what = write.kind === 'register-view' ? 'view' : 'table'
  const base = { flows: ['register'], rules: [], decided: [], injected: [], inject: [], warnings: [] }
  const permission = registration?.(entry.table) ?? { allowed: true }
  if (permission.allowed) return { ...base, verdict: 'allow', summary: '' }
  return {
    ...base,
    verdict: 'refused',
    summary: 'registration not allowed',
    refusal: answer(ERRORS.FORBIDDEN,
      `Cannot register ${what} ${tableName(entry.table)}: the policy does not allow registering ${what}s in this scope` +
      (permission.reason !== undefined ? ` (${permission.reason})` : ''))
  }
}

/**
 * Dropping or renaming a table that views read: one finding per view under VIEW_REFERENCES_COLUMN,
 * with the table's settings (severity, scope, exceptions, warn mode). Refused (400) only when the
 * policy makes the rule an error there.
 */
export function decideTableRemoval (table: TableRef, verb: 'drop' | 'rename', views: readonly DependentView[], settings: RuleSettings,
  opts: { readonly to?: TableRef, readonly ruleLinks?: string } = {}): Decision {
  const name = tableName(table)
  const findings = settle(VIEW_REFERENCES_COLUMN.id, tableRemovalViolations(views, verb, name, opts.to === undefined ? undefined : tableName(opts.to)), settings)
  const summary = `table ${verb === 'drop' ? 'dropped' : `renamed to ${opts.to === undefined ? '?' : tableName(opts.to)}`}; ${views.length} view(s) read it`
  const base = {
    flows: [verb === 'drop' ? 'drop-table' : 'rename-table'],
    rules: unique(findings.map(f => f.rule)),
    summary,
    injected: [],
    inject: [],
    warnings: findings.filter(f => f.severity === 'warn').map(finding => ({ finding })),
    decided: [{ namespace: table.namespace, name: table.name, findings, summary }]
  }
  const errors = findings.filter(f => f.severity === 'error')
  if (errors.length > 0) return { ...base, verdict: 'deny', refusal: rejection([{ table: name, errors }], { docs: opts.ruleLinks }) }
  return { ...base, verdict: findings.length > 0 ? 'warn' : 'allow' }
}

/** Whether a base that does not exist (404) is what a change request expects: the commit that completes a staged create. */
export function expectsNoTable (request: JsonBody): boolean {
  const reqs = request.requirements
  return Array.isArray(reqs) && reqs.some(r => isObject(r) && typeof r.type === 'string' && r.type.toLowerCase() === 'assert-create')
}

function refused (message: string, tables: readonly TableRef[], flows: readonly string[] = []): EarlyRefusal {
  return { refusal: answer(ERRORS.BAD_REQUEST, message), tables, flows }
}

function unique<T> (items: readonly T[]): T[] {
  return [...new Set(items)]
}
