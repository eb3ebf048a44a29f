/**
 * The enforcement half of the gate (a policy enforcement point): the one straight path every
 * schema-changing write takes, and the one entry point both transports call (`gateCommit`, via
 * `gate-service.ts`).
 *
 *   triage → read the write → load bases → judge (judge-write.ts) → answer | splice + forward → audit
 *
 * The decision is made by the pure functions of `judge-write.ts`; this module does what they
 * cannot: reads the body and the override header, loads base metadata, forwards once, maps
 * transport failures, and writes the audit line. Fastify-free; the dependencies (upstream calls,
 * policy, audit sink) are injected, so the same function runs under tests with fakes and in the
 * server with the real upstream.
 *
 * Status codes are chosen for what Java, PyIceberg and Rust clients do next (docs/errors.md):
 * an upstream the gate could not consult is a 503 with Retry-After (nothing forwarded), and only a
 * commit whose bytes left and whose answer was lost a 502/504 CommitStateUnknownException. A
 * commit is never retried here.
 */
import type { IncomingHttpHeaders } from 'node:http'
import { principalFromHeaders } from '../audit/principal.js'
import type { AuditRecord, AuditSink, DecidedTable } from '../audit/audit-log.js'
import { ERRORS } from '../errors.js'
import { isObject } from '../iceberg/json-values.js'
import { tableName, type TableRef } from '../iceberg/rest-path.js'
import type { TableMetadata } from '../iceberg/types.js'
import type { Finding, RuleSettings, Verdict } from '../engine/rules/rule.js'
import { hasContentCoding, needsGate } from '../json/commit-scan.js'
import { answer, badRequest, upstreamUnavailable, warningsHeader, type GateAnswer } from './gate-answers.js'
import type { BaseLoad, GateConfig, GatedKind, GateIdent, GateOutcome, RegistrationCheck, RemovalKind, UpstreamAnswer, ViewIndexPort } from './gate-types.js'
import {
  decideRegister, decideTableRemoval, decideWrite, expectsNoTable, judgeChange, readWrite, writtenViewVersion,
  type Decision, type JudgedChange, type ViewFacts, type Write, type WriteEntry
} from './judge-write.js'
import { readTableIdentifier } from '../iceberg/rest-path.js'
import type { Schema, WireObject } from '../iceberg/types.js'
import { readView, type ViewReading } from '../lineage/read-view.js'
import { parseCommitBody } from '../json/parse-commit-body.js'
import { checkSchemaHistory } from '../engine/schema-history-check.js'
import { spliceRequirements } from '../json/splice-requirements.js'
import { checkOverrideToken, OVERRIDE_HEADER, type OverrideGrant, type OverrideVerifier } from './override.js'
import { ruleLinkBase } from './rule-link-base.js'

export type { BaseLoad, GateConfig, GatedKind, GateIdent, GateOutcome, RegistrationCheck }

interface GateInput {
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

interface GateDeps {
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
  /** The view index: who reads a table, and the view writes to keep it current. */
  readonly views?: ViewIndexPort
  /** GET on the upstream with the caller's headers (a registered view's metadata). */
  get? (path: string, headers: IncomingHttpHeaders): Promise<UpstreamAnswer>
  readonly now?: () => number
  /** Told about faults of the gate itself (a bug, not a request's content), for the log. */
  readonly onError?: (err: unknown) => void
  /** Runs one step of the write's CPU work, so that the caller can time and trace it (gate-service.ts). */
  readonly phase?: <T>(name: 'triage' | 'judge', work: () => T) => T
}

const WARNINGS_HEADER = 'x-iceguard-warnings'

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

/** What the audit line of one write will say; filled in as the write goes. */
interface Trail {
  readonly started: number
  readonly principal?: string
  tables: readonly TableRef[]
  flows: readonly string[]
  rules: readonly string[]
  warnings: readonly string[]
  summary: string
  injected: readonly string[]
  override?: OverrideGrant
  /** Each judged table's findings and diff summary, for the decision log. */
  decided?: readonly DecidedTable[]
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

  if (isRemoval(input.kind)) return await gateRemoval(input, deps, trail, input.kind)

  // Fast path: no update that can touch a schema, spec or sort order. The bytes go as they came,
  // with no base load and no full parse (data commits are most commits).
  const coded = hasContentCoding(input.headers['content-encoding'])
  if (!coded && (input.kind === 'update-table' || input.kind === 'transaction' || input.kind === 'update-view') &&
      input.scanned !== true && !needsGate(input.rawBody)) {
    return await forwardOnce(input.rawBody, deps)
  }
  if (coded) {
    return refuse(input, deps, trail, answer(ERRORS.UNSUPPORTED_MEDIA_TYPE,
      'Cannot read a schema-changing write sent with a Content-Encoding: the gate must read it; send the body uncompressed'))
  }
  const parsed = parseCommitBody(input.rawBody)
  if (!parsed.ok) return refuse(input, deps, trail, badRequest(parsed.message))
  if (!isObject(parsed.value)) {
    return refuse(input, deps, trail, badRequest('Cannot read request body: expected a JSON object'))
  }

  try {
    const body = parsed.value
    const read = phase(deps, 'triage', () => readWrite(input.kind, input.ident, body))
    if ('refusal' in read) {
      trail.tables = read.tables
      trail.flows = read.flows
      return refuse(input, deps, trail, read.refusal)
    }
    const write = read.write
    trail.tables = write.entries.map(e => e.table)
    if (write.judge === 'register') return await enforceRegister(input, deps, trail, write)

    let grant: OverrideGrant | undefined
    if (write.overridable) {
      const checked = checkOverride(input, deps, write.entries.map(e => e.table))
      if ('answer' in checked) return refuse(input, deps, trail, checked.answer)
      grant = checked.grant
    }
    // A view version is read (its SQL parsed, the schemas of its tables loaded with the caller's
    // credentials) to judge what it reads and, once the catalog accepts it, to index it.
    const version = write.judge === 'view' && deps.views !== undefined ? writtenViewVersion(write) : undefined
    const reading = version === undefined ? undefined : await readView(version, async table => await schemaOf(deps, input, table))
    const judged = write.judge === 'base'
      ? await loadAndJudge(input, deps, write, grant)
      : { judged: phase(deps, 'judge', () => write.entries.map(e => judgeWithSettings(deps, write, e, undefined, grant, reading === undefined ? {} : { viewReads: reading.missing }))) }
    if ('outcome' in judged) {
      if (trail.summary === '') {
        trail.summary = judged.outcome.type === 'answer'
          ? judged.outcome.answer.body.error.message
          : `base load answered ${judged.outcome.response.statusCode}`
      }
      return done(input, deps, trail, judged.outcome, judged.verdict)
    }
    const accepted = reading === undefined ? undefined : () => deps.views?.written((write.entries[0] as WriteEntry).table, reading.reads)
    const decision = phase(deps, 'judge', () => decideWrite(write, judged.judged, { assertions: deps.config.assertions, ruleLinks: ruleLinkBase(deps.config.publicUrl, input.headers) }))
    return await enforce(input, deps, trail, decision, accepted)
  } catch (err) {
    // A fault of the gate itself. Before forwarding it is a definite failure (503, retry later:
    // never 500, which clients read as "state unknown"); after, the commit's fate is unknown.
    deps.onError?.(err)
    const failure = trail.forwarding
      ? answer(ERRORS.UPSTREAM_BAD_RESPONSE_COMMIT, 'Commit state unknown: iceguard failed after forwarding the commit; reload the table to see whether it was applied')
      : upstreamUnavailable('Cannot validate commit: iceguard failed while evaluating it (see the iceguard log)', deps.config.retryAfter)
    trail.summary = 'internal error'
    return done(input, deps, trail, { type: 'answer', answer: failure }, 'error')
  }
}

/**
 * Carries out a decision: answer the refusal, or add the missing requirements and forward once.
 * `accepted` runs when the upstream answers 2xx (the view index learns a view write).
 */
async function enforce (input: GateInput, deps: GateDeps, trail: Trail, decision: Decision, accepted?: () => void): Promise<GateOutcome> {
  trail.flows = decision.flows
  trail.rules = decision.rules
  trail.summary = decision.summary
  trail.decided = decision.decided
  trail.warnings = unique(decision.warnings.map(w => w.finding.rule))
  if (decision.override !== undefined) trail.override = decision.override
  if (decision.refusal !== undefined) {
    if (trail.summary === '') trail.summary = decision.refusal.body.error.message
    return done(input, deps, trail, { type: 'answer', answer: decision.refusal }, decision.verdict)
  }
  trail.injected = decision.injected
  // Only the requirements are added, spliced into the bytes as received: nothing is re-encoded.
  const outgoing = decision.inject.length === 0 ? input.rawBody : spliceRequirements(input.rawBody, decision.inject)

  trail.forwarding = true
  const sent = await forwardOnce(outgoing, deps)
  if (sent.type === 'answer') return done(input, deps, trail, sent, 'error')
  if (sent.response.statusCode >= 200 && sent.response.statusCode < 300) accepted?.()
  const headers: Record<string, string> = {}
  const header = warningsHeader(decision.warnings)
  if (header !== undefined) headers[WARNINGS_HEADER] = header
  return done(input, deps, trail, { ...sent, headers }, decision.verdict)
}

/**
 * registerTable and registerView: allowed or refused up front by the policy (`decideRegister`);
 * once a table is registered its history is visible, and what the spec rules find in it is
 * reported as warnings.
 */
async function enforceRegister (input: GateInput, deps: GateDeps, trail: Trail, write: Write): Promise<GateOutcome> {
  trail.flows = ['register']
  const decision = decideRegister(write, deps.registration)
  if (decision.refusal !== undefined) {
    trail.summary = decision.summary
    return done(input, deps, trail, { type: 'answer', answer: decision.refusal }, decision.verdict)
  }
  const table = (write.entries[0] as WriteEntry).table
  trail.forwarding = true
  const sent = await forwardOnce(input.rawBody, deps)
  if (sent.type === 'answer') return done(input, deps, trail, sent, 'error')
  const response = sent.response
  const headers: Record<string, string> = {}
  if (response.statusCode < 200 || response.statusCode >= 300) {
    trail.summary = `register answered ${response.statusCode}`
  } else if (write.kind === 'register-view') {
    // A view's schemas may change freely: there is no history to check. Its version is indexed.
    trail.summary = 'view registered'
    await indexRegisteredView(deps, input, table)
  } else {
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

function judgeWithSettings (deps: GateDeps, write: Write, entry: WriteEntry, base: TableMetadata | undefined, grant: OverrideGrant | undefined,
  facts?: ViewFacts): JudgedChange {
  const views = facts ?? (write.judge === 'base' && deps.views !== undefined ? { dependents: deps.views.dependentsOf(entry.table) } : {})
  return judgeChange(write, entry, base, deps.settingsFor(entry.table), grant, views)
}

const REMOVALS: ReadonlySet<GatedKind> = new Set<RemovalKind>(['drop-table', 'rename-table', 'drop-view', 'rename-view'])

function isRemoval (kind: GatedKind): kind is RemovalKind {
  return REMOVALS.has(kind)
}

/**
 * Drops and renames. A table's is judged by the views that read it (`decideTableRemoval`); a
 * view's is forwarded as it came and, once the catalog accepts it, applied to the view index.
 */
async function gateRemoval (input: GateInput, deps: GateDeps, trail: Trail, kind: RemovalKind): Promise<GateOutcome> {
  const at: TableRef = { ...(input.ident.prefix !== undefined && { prefix: input.ident.prefix }), namespace: input.ident.namespace, name: input.ident.table ?? '' }
  let source = at
  let destination: TableRef | undefined
  if (kind === 'rename-table' || kind === 'rename-view') {
    const what = kind === 'rename-table' ? 'table' : 'view'
    const parsed = parseCommitBody(input.rawBody)
    const body = parsed.ok && isObject(parsed.value) ? parsed.value : undefined
    const src = readTableIdentifier(body?.source)
    const dst = readTableIdentifier(body?.destination)
    if (body === undefined || 'problem' in src || 'problem' in dst) {
      const problem = body === undefined ? 'the body is not a JSON object' : 'problem' in src ? `source ${src.problem}` : `destination ${(dst as { problem: string }).problem}`
      return refuse(input, deps, trail, badRequest(`Cannot rename ${what}: ${problem}`))
    }
    source = { ...(input.ident.prefix !== undefined && { prefix: input.ident.prefix }), ...src }
    destination = { ...(input.ident.prefix !== undefined && { prefix: input.ident.prefix }), ...dst }
  }
  trail.tables = [source]
  if (kind === 'drop-table' || kind === 'rename-table') {
    const views = deps.views?.dependentsOf(source) ?? []
    const decision = decideTableRemoval(source, kind === 'drop-table' ? 'drop' : 'rename', views, deps.settingsFor(source), {
      ...(destination !== undefined && { to: destination }),
      ruleLinks: ruleLinkBase(deps.config.publicUrl, input.headers)
    })
    return await enforce(input, deps, trail, decision)
  }
  trail.flows = [kind]
  trail.summary = kind === 'drop-view' ? 'view dropped' : `view renamed to ${tableName(destination as TableRef)}`
  const to = destination
  return await enforce(input, deps, trail, { verdict: 'allow', flows: [kind], rules: [], summary: trail.summary, inject: [], injected: [], warnings: [], decided: [] },
    () => { if (to === undefined) deps.views?.dropped(source); else deps.views?.renamed(source, to) })
}

/** A table's current schema for reading a view, loaded as the gate loads a base: with the caller's credentials. */
async function schemaOf (deps: GateDeps, input: GateInput, table: readonly string[]): Promise<Schema | undefined> {
  if (table.length < 2) return undefined
  const ref: TableRef = { ...(input.ident.prefix !== undefined && { prefix: input.ident.prefix }), namespace: table.slice(0, -1), name: table[table.length - 1] as string }
  const load = await deps.loadTable(ref, baseLoadHeaders(input.headers))
  const m = load.metadata
  return m?.schemas.find(s => s.schemaId === m.currentSchemaId)
}

/** A registered view's metadata lives in storage the gate does not read: it is loaded from the catalog once accepted. */
async function indexRegisteredView (deps: GateDeps, input: GateInput, view: TableRef): Promise<void> {
  if (deps.views === undefined || deps.get === undefined) return
  try {
    const prefix = view.prefix === undefined || view.prefix === '' ? '' : `${encodeURIComponent(view.prefix)}/`
    const res = await deps.get(`/v1/${prefix}namespaces/${view.namespace.map(encodeURIComponent).join('%1F')}/views/${encodeURIComponent(view.name)}`, baseLoadHeaders(input.headers))
    if (res.statusCode !== 200) return
    const body = JSON.parse(res.body.toString('utf8')) as unknown
    const metadata = isObject(body) && isObject(body.metadata) ? body.metadata : undefined
    const versions = metadata !== undefined && Array.isArray(metadata.versions) ? metadata.versions : []
    const version = versions.find((v): v is WireObject => isObject(v) && v['version-id'] === metadata?.['current-version-id'])
    if (version === undefined) return
    const reading: ViewReading = await readView(version, async table => await schemaOf(deps, input, table))
    deps.views.written(view, reading.reads)
  } catch {
    // The crawl indexes it later; a registered view is not refused for the index's sake.
  }
}

type EarlyOutcome = { readonly outcome: GateOutcome, readonly verdict: Verdict }

/**
 * Loads every change's base and judges the change against it.
 *
 * Every judgement used is made against a base the upstream has just sent or confirmed (304).
 * The judging is started while the loads are in flight, against the bases this caller's cache
 * holds: each load revalidates exactly the cached base it was sent for, and when it comes back
 * with that very object the early judgement is kept; any other answer (new metadata, an error)
 * discards it. The evaluation then overlaps the revalidation round trip instead of following it
 * (measured in docs/performance.md); a judgement discarded (the table changed since it was
 * cached) costs one evaluation of CPU.
 */
async function loadAndJudge (input: GateInput, deps: GateDeps, write: Write, grant: OverrideGrant | undefined): Promise<{ judged: JudgedChange[] } | EarlyOutcome> {
  const entries = write.entries
  const headers = baseLoadHeaders(input.headers)
  const loading = loadBases(deps, entries, headers)
  // In the same tick as the loads were made: the bases their If-None-Match names.
  const peeked = entries.map(e => deps.peekBase?.(e.table, headers))
  let early: Array<JudgedChange | undefined> = []
  if (peeked.some(base => base !== undefined)) {
    // The pool may hand a GET to its socket a few microtasks later: let it leave first.
    await new Promise(resolve => setImmediate(resolve))
    try {
      early = phase(deps, 'judge', () => entries.map((e, i) => {
        const base = peeked[i]
        return base === undefined ? undefined : judgeWithSettings(deps, write, e, base, grant)
      }))
    } catch {
      // The same judgement is made again below, against the confirmed base, where a fault is handled.
      early = []
    }
  }
  const loaded = await loading
  if ('outcome' in loaded) return loaded
  return {
    judged: phase(deps, 'judge', () => entries.map((e, i) => {
      const base = loaded.bases[i]
      const ahead = early[i]
      return ahead !== undefined && base !== undefined && ahead.base === base ? ahead : judgeWithSettings(deps, write, e, base, grant)
    }))
  }
}

function phase<T> (deps: GateDeps, name: 'triage' | 'judge', work: () => T): T {
  return deps.phase === undefined ? work() : deps.phase(name, work)
}

/** Loads every base in parallel; one failure decides the answer for the whole write. The GETs are sent before this returns. */
async function loadBases (
  deps: GateDeps,
  entries: readonly WriteEntry[],
  headers: IncomingHttpHeaders
): Promise<{ bases: Array<TableMetadata | undefined> } | EarlyOutcome> {
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
    } else if (load.status === 404 && expectsNoTable(r.entry.request)) {
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
function forwardFailure (err: unknown, deps: GateDeps): GateAnswer {
  const e = (typeof err === 'object' && err !== null ? err : {}) as { sent?: unknown, failure?: unknown, statusCode?: unknown, code?: unknown }
  if (e.sent === false) {
    return upstreamUnavailable(`Cannot forward commit: the upstream catalog is unreachable (${describeError(err)})`, deps.config.retryAfter)
  }
  const timeout = e.failure === 'timeout' || e.statusCode === 504 || (typeof e.code === 'string' && /TIMEOUT/i.test(e.code))
  return answer(timeout ? ERRORS.UPSTREAM_TIMEOUT_COMMIT : ERRORS.UPSTREAM_BAD_RESPONSE_COMMIT,
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

function refuse (input: GateInput, deps: GateDeps, trail: Trail, refusal: GateAnswer): GateOutcome {
  if (trail.summary === '') trail.summary = refusal.body.error.message
  return done(input, deps, trail, { type: 'answer', answer: refusal }, 'refused')
}

/** Writes the audit line of a decision and returns the outcome. */
function done (input: GateInput, deps: GateDeps, trail: Trail, outcome: GateOutcome, verdict: Verdict): GateOutcome {
  const now = deps.now ?? Date.now
  const forwarded = outcome.type === 'upstream' && outcome.forwarded
  const status = outcome.type === 'upstream' ? outcome.response.statusCode : outcome.answer.statusCode
  const record: AuditRecord = {
    requestId: input.requestId,
    ...(trail.principal !== undefined ? { principal: trail.principal } : {}),
    kind: input.kind,
    tables: trail.tables.map(t => tableName(t)),
    tableRefs: trail.tables,
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
    ...(trail.override !== undefined ? { overrideId: trail.override.id, overrideRules: trail.override.rules, overrideReason: oneLine(trail.override.reason, 500) } : {}),
    ...(trail.decided !== undefined ? { decided: trail.decided } : {})
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

function unique<T> (items: readonly T[]): T[] {
  return [...new Set(items)]
}
