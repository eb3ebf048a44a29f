/**
 * The gate: the one straight path every schema-changing write takes (STYLE §3.4).
 *
 *   fast path → parse → load base → evaluate → decide → reject | conflict | forward → audit
 *
 * Fastify-free; the route hands in the raw body and the request's headers, and the dependencies
 * (upstream calls, policy, audit sink) are injected, so the same function runs under tests with
 * fakes and in the server with the real upstream.
 *
 * Status codes are chosen for what Java, PyIceberg and Rust clients do next (reference §2.1, §7.1):
 * a finding is a 400 (clean failure, never retried), a requirement that no longer holds a 409, an
 * upstream the gate could not consult a 503 with Retry-After (nothing forwarded), and only a commit
 * whose bytes left and whose answer was lost a 502/504 CommitStateUnknownException. A commit is
 * never retried here.
 */
import type { IncomingHttpHeaders } from 'node:http'
import { principalFromHeaders } from '../audit/principal.js'
import type { AuditRecord, AuditSink, AuditVerdict } from '../audit/audit-log.js'
import { parseViewVersion } from '../iceberg/view-metadata.js'
import type { ParseIssue, TableMetadata } from '../iceberg/types.js'
import type { Finding, RuleSettings } from '../rules/rule.js'
import { hasContentCoding, needsGate } from '../http/commit-scan.js'
import type { GatedKind } from '../http/rest-routes.js'
import { evaluateCommit, evaluateCreate, type Evaluation } from './evaluate-commit.js'
import {
  answer, badRequest, conflict, rejection, upstreamUnavailable, warningsHeader, type GateAnswer
} from './gate-answers.js'
import { describeRequirement, missingRequirements, type AssertionsMode, type MissingRequirement } from './inject-requirements.js'
import { isJsonObject, parseCommitBody } from './parse-commit-body.js'
import { ruleLinkBase } from './rule-link-base.js'
import { checkSchemaHistory } from './schema-history-check.js'
import { spliceRequirements, type JsonPath } from './splice-requirements.js'
import { checkOverrideToken, evaluateUnder, grantFor, OVERRIDE_HEADER, type OverrideGrant, type OverrideVerifier } from './override.js'

/** The writes the gate sees (the `gate` routes of src/http/rest-routes.ts); the rest are passed through or refused. */
export type { GatedKind }

/** A table (or view) the gate reasons about. `prefix` is the raw `{prefix}` path segment, if any. */
export interface TableRef {
  readonly prefix?: string
  readonly namespace: readonly string[]
  readonly name: string
}

/** Where the request was sent: the namespace, and the table or view for update routes. */
export interface GateIdent {
  readonly prefix?: string
  readonly namespace: readonly string[]
  readonly table?: string
}

export interface GateInput {
  readonly kind: GatedKind
  readonly ident: GateIdent
  readonly rawBody: Buffer
  /** The caller already ran `needsGate` on this very body, and it said yes: not scanned again. */
  readonly scanned?: boolean
  readonly headers: IncomingHttpHeaders
  readonly requestId: string
  /** Non-secret identity of the caller; derived from `Authorization` when absent. */
  readonly principal?: string
}

/** An upstream answer as it came: the gate relays it without reading more than it must. */
export interface UpstreamAnswer {
  readonly statusCode: number
  readonly headers: Readonly<Record<string, string | string[] | undefined>>
  readonly body: Buffer
}

/** Result of loading a table's current metadata from the upstream. */
export interface BaseLoad {
  readonly status: number
  /** Parsed metadata when status is 200 and the body was readable. */
  readonly metadata?: TableMetadata
  /** Why a 200 body could not be read as table metadata. */
  readonly problem?: string
  /** The upstream's body and headers for a non-200 answer, relayed as they came. */
  readonly rawStatusBody?: Buffer
  readonly headers?: Readonly<Record<string, string | string[] | undefined>>
}

export interface GateConfig {
  readonly assertions: AssertionsMode
  /** Seconds in Retry-After when the base could not be loaded. */
  readonly retryAfter: number
  /** `ICEGUARD_PUBLIC_URL`: the base of the rule links in refusals; absent, the request's own origin. */
  readonly publicUrl?: string
}

/** May a table or view be registered (registerTable, registerView) in this scope? Absent: allowed. */
export type RegistrationCheck = (table: TableRef) => { readonly allowed: boolean, readonly reason?: string }

export interface GateDeps {
  /**
   * GET …/tables/{t}?snapshots=refs with the caller's headers. Throws when the upstream cannot be
   * reached. The request is sent before the returned promise is.
   */
  loadTable (table: TableRef, headers: IncomingHttpHeaders): Promise<BaseLoad>
  /**
   * The base a load of `table` with these headers would reuse on a 304 (the same object), if any:
   * the gate judges against it while the load revalidates it, and keeps that verdict only when
   * the load returns that very object.
   */
  peekBase? (table: TableRef, headers: IncomingHttpHeaders): TableMetadata | undefined
  /** Sends the (possibly rewritten) body to the upstream on the request's own path. Never retried. */
  forward (body: Buffer): Promise<UpstreamAnswer>
  /** The rule settings (effective policy) for one table. */
  settingsFor (table: TableRef): RuleSettings
  readonly audit: AuditSink
  readonly config: GateConfig
  /** Verifies a break-glass token; absent means overrides are not configured. */
  readonly verifyOverride?: OverrideVerifier
  readonly registration?: RegistrationCheck
  readonly now?: () => number
  /** Told about faults of the gate itself (a bug, not a request's content), for the log. */
  readonly onError?: (err: unknown) => void
}

export type GateOutcome =
  /** Relay an upstream answer; `forwarded` says whether the commit itself was sent. */
  | { readonly type: 'upstream', readonly forwarded: boolean, readonly response: UpstreamAnswer, readonly headers: Readonly<Record<string, string>> }
  /** The gate answers itself; nothing was forwarded. */
  | { readonly type: 'answer', readonly answer: GateAnswer }

export const WARNINGS_HEADER = 'x-iceguard-warnings'

/** Headers of the caller that must not travel on the gate's own base-metadata GET. */
const NOT_ON_BASE_LOAD = new Set([
  'host', 'content-length', 'content-type', 'transfer-encoding', 'connection', 'keep-alive', 'expect',
  'te', 'trailer', 'upgrade', 'proxy-connection',
  // A conditional GET could answer 304 with no metadata to judge.
  'if-none-match', 'if-match', 'if-modified-since', 'if-unmodified-since',
  // The key belongs to the commit: reusing it on another request would confuse replay.
  'idempotency-key',
  // The gate needs the schema, not vended storage credentials.
  'x-iceberg-access-delegation',
  OVERRIDE_HEADER
])

/** The caller's headers for the base load: its own Authorization and identity, nothing per-request. */
export function baseLoadHeaders (headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const out: IncomingHttpHeaders = {}
  for (const [k, v] of Object.entries(headers)) {
    if (v !== undefined && !NOT_ON_BASE_LOAD.has(k.toLowerCase())) out[k.toLowerCase()] = v
  }
  return out
}

export function tableName (t: { readonly namespace: readonly string[], readonly name: string }): string {
  return [...t.namespace, t.name].join('.')
}

/** One change of a commit under judgement: a table, its request object, its base and evaluation. */
interface Judged {
  readonly table: TableRef
  readonly request: Record<string, unknown>
  /** Where `request` sits in the body, for requirements spliced into it. */
  readonly at: JsonPath
  readonly base?: TableMetadata
  readonly evaluation: Evaluation
  readonly override?: OverrideGrant
  readonly missing: readonly MissingRequirement[]
}

interface Trail {
  readonly started: number
  readonly principal?: string
  tables: string[]
  flows: string[]
  rules: string[]
  warnings: string[]
  summary: string
  injected: string[]
  override?: OverrideGrant
  /** Set once the commit is handed to the upstream. */
  forwarding: boolean
}

/** Judges one gated write and forwards it or answers it. Never throws for a request's content. */
export async function gateCommit (input: GateInput, deps: GateDeps): Promise<GateOutcome> {
  const now = deps.now ?? Date.now
  const trail: Trail = {
    started: now(),
    principal: input.principal ?? principalFromHeaders(input.headers),
    tables: [],
    flows: [],
    rules: [],
    warnings: [],
    summary: '',
    injected: [],
    forwarding: false
  }

  // Fast path: no update that can touch a schema, spec or sort order. The bytes go as they came,
  // with no base load and no full parse (data commits are most commits).
  const coded = hasContentCoding(input.headers['content-encoding'])
  if (!coded && (input.kind === 'update-table' || input.kind === 'transaction' || input.kind === 'update-view') &&
      input.scanned !== true && !needsGate(input.rawBody)) {
    return await forwardOnce(input.rawBody, deps)
  }
  if (coded) {
    return refuse(input, deps, trail, answer(415, 'BadRequestException',
      'Cannot read a schema-changing write sent with a Content-Encoding: the gate must read it; send the body uncompressed'))
  }
  const parsed = parseCommitBody(input.rawBody)
  if (!parsed.ok) return refuse(input, deps, trail, badRequest(parsed.message))
  if (!isJsonObject(parsed.value)) {
    return refuse(input, deps, trail, badRequest('Cannot read request body: expected a JSON object'))
  }
  const body = parsed.value

  try {
    switch (input.kind) {
      case 'update-table':
        return await gateTableCommit(input, deps, trail, body)
      case 'transaction':
        return await gateTransaction(input, deps, trail, body)
      case 'create-table':
        return await gateCreate(input, deps, trail, body)
      case 'register-table':
        return await gateRegister(input, deps, trail, body, 'table')
      case 'register-view':
        return await gateRegister(input, deps, trail, body, 'view')
      case 'update-view':
        return await gateView(input, deps, trail, body, false)
      case 'create-view':
        return await gateView(input, deps, trail, body, true)
    }
  } catch (err) {
    // A fault of the gate itself. Before forwarding it is a definite failure (503, retry later:
    // never 500, which clients read as "state unknown"); after, the commit's fate is unknown.
    deps.onError?.(err)
    const failure = trail.forwarding
      ? answer(502, 'CommitStateUnknownException', 'Commit state unknown: iceguard failed after forwarding the commit; reload the table to see whether it was applied')
      : upstreamUnavailable('Cannot validate commit: iceguard failed while evaluating it (see the iceguard log)', deps.config.retryAfter)
    trail.summary = 'internal error'
    return done(input, deps, trail, { type: 'answer', answer: failure }, 'error')
  }
}

async function gateTableCommit (input: GateInput, deps: GateDeps, trail: Trail, body: Record<string, unknown>): Promise<GateOutcome> {
  const table: TableRef = { prefix: input.ident.prefix, namespace: input.ident.namespace, name: input.ident.table ?? '' }
  trail.tables = [tableName(table)]
  // The Java client omits the identifier on single-table commits; when present it must name the
  // path's table. It is optional here, and Java reads a null identifier as absent (hasNonNull).
  if (body.identifier !== undefined && body.identifier !== null) {
    const id = readIdentifier(body.identifier)
    if ('problem' in id) {
      return refuse(input, deps, trail, badRequest(`Cannot commit to ${tableName(table)}: the body's identifier ${id.problem}`))
    }
    if (tableName(id) !== tableName(table)) {
      return refuse(input, deps, trail, badRequest(
        `Cannot commit to ${tableName(table)}: the body's identifier names ${tableName(id)}, not the table in the request path`))
    }
  }
  const grant = checkOverride(input, deps, [table])
  if ('answer' in grant) return refuse(input, deps, trail, grant.answer)

  const judged = await loadAndJudge(input, deps, [{ table, request: body, at: [] }], grant.grant)
  if ('outcome' in judged) return finishEarly(input, deps, trail, judged.outcome, judged.verdict)
  return await decideAndForward(input, deps, trail, judged.judged)
}

async function gateTransaction (input: GateInput, deps: GateDeps, trail: Trail, body: Record<string, unknown>): Promise<GateOutcome> {
  const changes = body['table-changes']
  if (!Array.isArray(changes) || changes.length === 0) {
    return refuse(input, deps, trail, badRequest('Cannot commit transaction: table-changes must be a non-empty array'))
  }
  const entries: Entry[] = []
  for (const [i, change] of changes.entries()) {
    const id = isJsonObject(change) ? readIdentifier(change.identifier) : { problem: 'is missing (the change is not an object)' }
    if (!isJsonObject(change) || 'problem' in id) {
      // Java CommitTransactionRequest.validate(): every change names its table.
      return refuse(input, deps, trail, badRequest(`Cannot commit transaction: table identifier is required (table-changes[${i}].identifier ${'problem' in id ? id.problem : 'is missing'})`))
    }
    entries.push({ table: { prefix: input.ident.prefix, ...id }, request: change, at: ['table-changes', i] })
  }
  trail.tables = entries.map(e => tableName(e.table))
  const grant = checkOverride(input, deps, entries.map(e => e.table))
  if ('answer' in grant) return refuse(input, deps, trail, grant.answer)

  const judged = await loadAndJudge(input, deps, entries, grant.grant)
  if ('outcome' in judged) return finishEarly(input, deps, trail, judged.outcome, judged.verdict)
  return await decideAndForward(input, deps, trail, judged.judged)
}

async function gateCreate (input: GateInput, deps: GateDeps, trail: Trail, body: Record<string, unknown>): Promise<GateOutcome> {
  if (typeof body.name !== 'string' || body.name === '') {
    return refuse(input, deps, trail, badRequest('Cannot create table: the request has no name'))
  }
  const table: TableRef = { prefix: input.ident.prefix, namespace: input.ident.namespace, name: body.name }
  trail.tables = [tableName(table)]
  const grant = checkOverride(input, deps, [table])
  if ('answer' in grant) return refuse(input, deps, trail, grant.answer)
  const evaluation = evaluateUnder(deps.settingsFor(table), grant.grant, table, settings => evaluateCreate({ request: body, settings }))
  const judged: Judged[] = [{ table, request: body, at: [], evaluation, override: grantFor(grant.grant, table), missing: [] }]
  return await decideAndForward(input, deps, trail, judged)
}

async function gateView (input: GateInput, deps: GateDeps, trail: Trail, body: Record<string, unknown>, create: boolean): Promise<GateOutcome> {
  const name = create ? body.name : input.ident.table
  if (typeof name !== 'string' || name === '') {
    return refuse(input, deps, trail, badRequest(`Cannot create view: the request has no name${body.name === null ? ' (name is null)' : ''}`))
  }
  if (create) {
    // CreateViewRequest requires these; Java's parser refuses each when null (JsonUtil.get,
    // getStringMap). `location` is optional and a null there is absent (getStringOrNull).
    const missing = ['schema', 'view-version', 'properties'].filter(k => body[k] === null)
    if (missing.length > 0) {
      return refuse(input, deps, trail, badRequest(`Cannot create view ${name}: ${missing.join(', ')} ${missing.length > 1 ? 'are' : 'is'} null (required)`))
    }
    const version = body['view-version']
    const problems: ParseIssue[] = []
    if (isJsonObject(version)) parseViewVersion(version, 'view-version', problems)
    if (problems.length > 0) {
      return refuse(input, deps, trail, badRequest(`Cannot create view ${name}: ${problems.map(p => `${p.message} (at ${p.at})`).join('; ')}`))
    }
  }
  const table: TableRef = { prefix: input.ident.prefix, namespace: input.ident.namespace, name }
  trail.tables = [tableName(table)]
  // A view's schema may change freely: only the structure of each schema it carries is checked,
  // so no base is needed (and view metadata is not table metadata).
  const request = create
    ? { requirements: [], updates: body.schema === undefined ? [] : [{ action: 'add-schema', schema: body.schema }] }
    : body
  const evaluation = evaluateCommit({ request, settings: deps.settingsFor(table), target: 'view' })
  const judged: Judged[] = [{ table, request: body, at: [], evaluation, missing: [] }]
  return await decideAndForward(input, deps, trail, judged)
}

/**
 * registerTable and registerView point the catalog at a metadata file that already exists in
 * storage the gate does not read, so the gate cannot judge its schemas before the upstream
 * accepts it: the policy decides up front whether registering is allowed here (registration.ts).
 */
async function gateRegister (input: GateInput, deps: GateDeps, trail: Trail, body: Record<string, unknown>, what: 'table' | 'view'): Promise<GateOutcome> {
  if (typeof body.name !== 'string' || body.name === '') {
    return refuse(input, deps, trail, badRequest(`Cannot register ${what}: the request has no name`))
  }
  const table: TableRef = { prefix: input.ident.prefix, namespace: input.ident.namespace, name: body.name }
  trail.tables = [tableName(table)]
  trail.flows = ['register']
  const location = body['metadata-location']
  if (typeof location !== 'string' || location === '') {
    // Required by RegisterTableRequest and RegisterViewRequest; `overwrite` is optional and a null there is absent (Java
    // getBoolOrNull; iceberg-rust writes `"overwrite": null` when unset).
    return refuse(input, deps, trail, badRequest(`Cannot register ${what} ${tableName(table)}: metadata-location ${location === null ? 'is null' : location === undefined ? 'is missing' : 'must be a non-empty string'}`))
  }
  // A refusal is a permission matter: 403 ForbiddenException.
  const permission = deps.registration?.(table) ?? { allowed: true }
  if (!permission.allowed) {
    trail.summary = 'registration not allowed'
    return refuse(input, deps, trail, answer(403, 'ForbiddenException',
      `Cannot register ${what} ${tableName(table)}: the policy does not allow registering ${what}s in this scope` +
      (permission.reason !== undefined ? ` (${permission.reason})` : '')))
  }
  trail.forwarding = true
  const sent = await forwardOnce(input.rawBody, deps)
  if (sent.type === 'answer') return done(input, deps, trail, sent, 'error')
  const response = sent.response
  const headers: Record<string, string> = {}
  if (response.statusCode < 200 || response.statusCode >= 300) {
    trail.summary = `register answered ${response.statusCode}`
  } else if (what === 'view') {
    // A view's schemas may change freely (gateView): there is no history to check.
    trail.summary = 'view registered'
  } else {
    // Registered: the table's history is now visible; report what the spec rules find in it.
    const history = await historyFindings(deps, table, input.headers)
    trail.summary = history.summary
    trail.rules = unique(history.findings.map(f => f.rule))
    trail.warnings = trail.rules
    const header = warningsHeader(history.findings.map(finding => ({ finding })))
    if (header !== undefined) headers[WARNINGS_HEADER] = header
  }
  const outcome: GateOutcome = { type: 'upstream', forwarded: true, response, headers }
  return done(input, deps, trail, outcome, trail.warnings.length > 0 ? 'warn' : 'allow')
}

async function historyFindings (deps: GateDeps, table: TableRef, headers: IncomingHttpHeaders): Promise<{ findings: Finding[], summary: string }> {
  try {
    const loaded = await deps.loadTable(table, baseLoadHeaders(headers))
    if (loaded.metadata === undefined) return { findings: [], summary: `registered; history not checked (load answered ${loaded.status})` }
    const findings = checkSchemaHistory(loaded.metadata)
    return {
      findings,
      summary: `registered with ${loaded.metadata.schemas.length} schema(s); history: ${findings.length === 0 ? 'no findings' : `${findings.length} finding(s)`}`
    }
  } catch {
    return { findings: [], summary: 'registered; history not checked (upstream unreachable)' }
  }
}

type Entry = { readonly table: TableRef, readonly request: Record<string, unknown>, readonly at: JsonPath }

/**
 * Loads every change's base and judges the change against it.
 *
 * Every judgement used is made against a base the upstream has just sent or confirmed (304).
 * The judging is started while the loads are in flight, against the bases this caller's cache
 * holds: each load revalidates exactly the cached base it was sent for, and when it comes back
 * with that very object the early judgement is kept; any other answer (new metadata, an error)
 * discards it. Why: the evaluation (~0.25 ms of CPU on the benchmark's commit) then overlaps the
 * revalidation round trip instead of following it; with the stub on another CPU the time from
 * the 304 to the forwarded commit fell from ~770 to ~200 µs (docs/performance.md). A judgement
 * discarded (the table changed since it was cached) costs one evaluation of CPU.
 */
async function loadAndJudge (
  input: GateInput,
  deps: GateDeps,
  entries: readonly Entry[],
  grant: OverrideGrant | undefined
): Promise<{ judged: Judged[] } | { outcome: GateOutcome, verdict: AuditVerdict }> {
  const headers = baseLoadHeaders(input.headers)
  const loading = loadBases(deps, entries, headers)
  // In the same tick as the loads were made: the bases their If-None-Match names.
  const peeked = entries.map(e => deps.peekBase?.(e.table, headers))
  let early: Array<Judged | undefined> = []
  if (peeked.some(base => base !== undefined)) {
    // The pool may hand a GET to its socket a few microtasks later: let it leave first.
    await new Promise(resolve => setImmediate(resolve))
    try {
      early = entries.map((e, i) => {
        const base = peeked[i]
        return base === undefined ? undefined : judgeOne(deps, e, base, grant)
      })
    } catch {
      // The same judgement is made again below, against the confirmed base, where a fault is handled.
      early = []
    }
  }
  const loaded = await loading
  if ('outcome' in loaded) return loaded
  return {
    judged: entries.map((e, i) => {
      const base = loaded.bases[i]
      const ahead = early[i]
      return ahead !== undefined && base !== undefined && ahead.base === base ? ahead : judgeOne(deps, e, base, grant)
    })
  }
}

/** Loads every base in parallel; one failure decides the answer for the whole write. The GETs are sent before this returns. */
async function loadBases (
  deps: GateDeps,
  entries: ReadonlyArray<{ table: TableRef, request: Record<string, unknown> }>,
  headers: IncomingHttpHeaders
): Promise<{ bases: Array<TableMetadata | undefined> } | { outcome: GateOutcome, verdict: AuditVerdict }> {
  const results = await Promise.all(entries.map(async (e) => {
    try {
      return { entry: e, load: await deps.loadTable(e.table, headers) }
    } catch (err) {
      return { entry: e, error: err as Error }
    }
  }))
  const bases: Array<TableMetadata | undefined> = []
  for (const r of results) {
    const name = tableName(r.entry.table)
    if (r.load === undefined) {
      return { outcome: { type: 'answer', answer: unavailable(deps, name, describeError(r.error)) }, verdict: 'error' }
    }
    const load = r.load
    if (load.status === 200 && load.metadata !== undefined) {
      bases.push(load.metadata)
    } else if (load.status === 200) {
      // The upstream answered but its metadata cannot be judged: fail closed, nothing forwarded.
      return { outcome: { type: 'answer', answer: unavailable(deps, name, `the upstream's table metadata could not be read (${load.problem ?? 'unreadable'})`) }, verdict: 'error' }
    } else if (load.status === 404 && hasAssertCreate(r.entry.request)) {
      // The commit that completes a staged create: the table does not exist yet; judge from empty.
      bases.push(undefined)
    } else if (load.status >= 500) {
      // The commit was not sent: a definite failure, not "state unknown".
      return { outcome: { type: 'answer', answer: unavailable(deps, name, `loading the table answered ${load.status}`) }, verdict: 'error' }
    } else {
      // 404, 401, 403 and the rest: the caller sees what the upstream told it.
      return { outcome: relayLoadAnswer(load), verdict: 'refused' }
    }
  }
  return { bases }
}

function relayLoadAnswer (load: BaseLoad): GateOutcome {
  const headers: Record<string, string | string[] | undefined> = {}
  // Only what describes the error travels: not the GET's ETag or length.
  for (const name of ['content-type', 'www-authenticate', 'retry-after']) {
    const v = load.headers?.[name]
    if (v !== undefined) headers[name] = v
  }
  return {
    type: 'upstream',
    forwarded: false,
    response: { statusCode: load.status, headers, body: load.rawStatusBody ?? Buffer.alloc(0) },
    headers: {}
  }
}

function judgeOne (deps: GateDeps, { table, request, at }: Entry, base: TableMetadata | undefined, grant: OverrideGrant | undefined): Judged {
  const evaluation = evaluateUnder(deps.settingsFor(table), grant, table, settings => evaluateCommit({ base, request, settings, target: 'table' }))
  return { table, request, at, base, evaluation, override: grantFor(grant, table), missing: missingRequirements(request, base, evaluation) }
}

/** Verdict over all changes (all-or-nothing), then reject, conflict, or forward. */
async function decideAndForward (
  input: GateInput,
  deps: GateDeps,
  trail: Trail,
  judged: readonly Judged[]
): Promise<GateOutcome> {
  trail.flows = unique(judged.map(j => j.evaluation.flow))
  trail.summary = judged.map(j => judged.length > 1 ? `${tableName(j.table)}: ${j.evaluation.summary}` : j.evaluation.summary).join(' | ')
  trail.rules = unique(judged.flatMap(j => j.evaluation.findings.map(f => f.rule)))
  const used = judged.find(j => j.override !== undefined)?.override
  if (used !== undefined) trail.override = used
  const stagedCreate = judged.some(j => j.evaluation.flow === 'staged-create')
  // Warnings are recorded whatever the verdict: a denied commit's audit line lists them too.
  const warnings = judged.flatMap(j => j.evaluation.findings
    .filter(f => f.severity === 'warn')
    .map(finding => ({ table: judged.length > 1 ? tableName(j.table) : undefined, finding })))
  trail.warnings = unique(warnings.map(w => w.finding.rule))

  const denied = judged.filter(j => j.evaluation.verdict === 'deny')
  if (denied.length > 0) {
    const refusal = rejection(denied.map(j => ({
      table: tableName(j.table),
      errors: j.evaluation.findings.filter(f => f.severity === 'error')
    })), { stagedCreate, docs: ruleLinkBase(deps.config.publicUrl, input.headers), nameTables: input.kind === 'transaction' })
    return done(input, deps, trail, { type: 'answer', answer: refusal }, 'deny')
  }
  const conflicted = judged.filter(j => j.evaluation.verdict === 'conflict')
  if (conflicted.length > 0) {
    const names = conflicted.map(j => tableName(j.table)).join(', ')
    const messages = conflicted.flatMap(j => j.evaluation.conflicts.map(c => `${c.type}: ${c.message}`))
    return done(input, deps, trail, { type: 'answer', answer: conflict(names, messages) }, 'conflict')
  }

  // Requirements the validated values must pin (race safety).
  const missing = judged.filter(j => j.missing.length > 0)
  if (missing.length > 0 && deps.config.assertions === 'require') {
    const demanded = missing.flatMap(j => j.missing.filter(m => m.requiredOfClient).map(m => ({ j, m })))
    if (demanded.length > 0) {
      const lines = demanded.map(({ j, m }) => `${tableName(j.table)}: send ${describeRequirement(m)}`)
      trail.summary = `missing requirement: ${unique(demanded.map(d => d.m.type)).join(', ')}`
      return refuse(input, deps, trail, answer(400, 'BadRequestException',
        `Cannot commit schema change without the requirements that pin the schema it was validated against: ${lines.join('; ')} ` +
        '(this gate is configured to require them, so a concurrent change cannot slip in unchecked)', lines))
    }
  }
  let outgoing = input.rawBody
  if (missing.length > 0) {
    // Only the requirements are added, spliced into the bytes as received: nothing is re-encoded.
    for (const j of missing) {
      trail.injected.push(...j.missing.map(m => judged.length > 1 ? `${tableName(j.table)}:${m.type}` : m.type))
    }
    outgoing = spliceRequirements(input.rawBody, missing.map(j => ({ at: j.at, requirements: j.missing })))
  }

  trail.forwarding = true
  const sent = await forwardOnce(outgoing, deps)
  if (sent.type === 'answer') return done(input, deps, trail, sent, 'error')
  const headers: Record<string, string> = {}
  const header = warningsHeader(warnings)
  if (header !== undefined) headers[WARNINGS_HEADER] = header
  return done(input, deps, trail, { ...sent, headers }, warnings.length > 0 ? 'warn' : 'allow')
}

/** Sends the commit once. A failure after the bytes left is "state unknown", never retried. */
async function forwardOnce (body: Buffer, deps: GateDeps): Promise<GateOutcome> {
  try {
    const response = await deps.forward(body)
    return { type: 'upstream', forwarded: true, response, headers: {} }
  } catch (err) {
    return { type: 'answer', answer: forwardFailure(err, deps) }
  }
}

/**
 * Maps a transport failure of the forwarded commit. The upstream client's `UpstreamError` says
 * whether the request left (`sent`); only then is the outcome unknown (502, or 504 on a timeout).
 * Before that, nothing reached the catalog: 503 with Retry-After, safe to retry.
 */
export function forwardFailure (err: unknown, deps: GateDeps): GateAnswer {
  const e = (typeof err === 'object' && err !== null ? err : {}) as { sent?: unknown, failure?: unknown, statusCode?: unknown, code?: unknown }
  if (e.sent === false) {
    return upstreamUnavailable(`Cannot forward commit: the upstream catalog is unreachable (${describeError(err)})`, deps.config.retryAfter)
  }
  const timeout = e.failure === 'timeout' || e.statusCode === 504 || (typeof e.code === 'string' && /TIMEOUT/i.test(e.code))
  return answer(timeout ? 504 : 502, 'CommitStateUnknownException',
    `Commit state unknown: the commit was sent to the upstream catalog but ${timeout ? 'no answer came in time' : 'its answer was lost'}` +
    ` (${describeError(err)}); reload the table to see whether it was applied`)
}

function unavailable (deps: GateDeps, table: string, detail: string): GateAnswer {
  return upstreamUnavailable(`Cannot validate commit to ${table}: base metadata unavailable: ${detail}`, deps.config.retryAfter)
}

/** A short transport-level reason: the socket error's code when there is one (ECONNREFUSED, UND_ERR_…). */
function describeError (err: unknown): string {
  const e = (typeof err === 'object' && err !== null ? err : {}) as { code?: unknown, message?: unknown, cause?: unknown }
  const cause = (typeof e.cause === 'object' && e.cause !== null ? e.cause : undefined) as { code?: unknown, message?: unknown } | undefined
  for (const c of [cause, e]) {
    if (c !== undefined && typeof c.code === 'string' && !c.code.startsWith('GATE_ERR_')) return c.code
  }
  const message = typeof cause?.message === 'string' ? cause.message : typeof e.message === 'string' ? e.message : String(err)
  return message.length > 200 ? `${message.slice(0, 199)}…` : message
}

interface OverrideCheck { readonly grant?: OverrideGrant }

/** Reads the break-glass header. A token that does not verify stops the write: 400, nothing forwarded. */
function checkOverride (input: GateInput, deps: GateDeps, tables: readonly TableRef[]): OverrideCheck | { readonly answer: GateAnswer } {
  const read = checkOverrideToken(input.headers[OVERRIDE_HEADER], deps.verifyOverride, tables)
  return 'refusal' in read ? { answer: badRequest(read.refusal) } : read
}

function finishEarly (input: GateInput, deps: GateDeps, trail: Trail, outcome: GateOutcome, verdict: AuditVerdict): GateOutcome {
  if (trail.summary === '') {
    trail.summary = outcome.type === 'answer'
      ? outcome.answer.body.error.message
      : `base load answered ${outcome.response.statusCode}`
  }
  return done(input, deps, trail, outcome, verdict)
}

function refuse (input: GateInput, deps: GateDeps, trail: Trail, refusal: GateAnswer): GateOutcome {
  if (trail.summary === '') trail.summary = refusal.body.error.message
  return done(input, deps, trail, { type: 'answer', answer: refusal }, 'refused')
}

/** Writes the audit line of a decision and returns the outcome. */
function done (input: GateInput, deps: GateDeps, trail: Trail, outcome: GateOutcome, verdict: AuditVerdict): GateOutcome {
  const now = deps.now ?? Date.now
  const forwarded = outcome.type === 'upstream' && outcome.forwarded
  const status = outcome.type === 'upstream' ? outcome.response.statusCode : outcome.answer.statusCode
  const record: AuditRecord = {
    requestId: input.requestId,
    ...(trail.principal !== undefined ? { principal: trail.principal } : {}),
    kind: input.kind,
    tables: trail.tables,
    flows: trail.flows,
    verdict,
    rules: trail.rules,
    warnings: trail.warnings,
    summary: oneLine(trail.summary),
    ...(trail.injected.length > 0 ? { injected: trail.injected } : {}),
    status,
    ...(forwarded ? { upstreamStatus: status } : {}),
    forwarded,
    durationMs: Math.max(0, now() - trail.started),
    ...(trail.override !== undefined ? { overrideId: trail.override.id, overrideRules: trail.override.rules, overrideReason: oneLine(trail.override.reason, 500) } : {})
  }
  try {
    deps.audit.record(record)
  } catch {
    // An audit sink failing must not turn a decided commit into an error.
  }
  return outcome
}

function oneLine (s: string, max = 1000): string {
  // eslint-disable-next-line no-control-regex
  const flat = s.replace(/[\u0000-\u001f\u007f]+/g, ' ')
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat
}

/** A TableIdentifier: both members are required by the spec, so a null in either is named. */
function readIdentifier (v: unknown): { namespace: string[], name: string } | { problem: string } {
  if (!isJsonObject(v)) return { problem: v === undefined ? 'is missing' : v === null ? 'is null' : 'must be an object' }
  const ns = v.namespace
  const name = v.name
  if (!Array.isArray(ns) || !ns.every(p => typeof p === 'string')) {
    return { problem: `namespace ${ns === null ? 'is null (required)' : ns === undefined ? 'is missing' : 'must be an array of strings'}` }
  }
  if (typeof name !== 'string' || name === '') return { problem: `name ${name === null ? 'is null (required)' : 'must be a non-empty string'}` }
  return { namespace: ns as string[], name }
}

function hasAssertCreate (request: Record<string, unknown>): boolean {
  const reqs = request.requirements
  return Array.isArray(reqs) && reqs.some(r => isJsonObject(r) && typeof r.type === 'string' && r.type.toLowerCase() === 'assert-create')
}

function unique<T> (items: readonly T[]): T[] {
  return [...new Set(items)]
}
