/**
 * The answers the gate gives itself, in the clients' dialect (docs/errors.md):
 * a deterministic refusal is a 400 (clients clean up and do not retry), a requirement that no
 * longer holds is a 409 CommitFailedException, an upstream the gate could not consult is a 503
 * with Retry-After (nothing was forwarded; Java retries that safely). Every message stands alone
 * because PyIceberg shows only `type: message`; `stack` holds one line per finding.
 */
import { errorBody, ERRORS, type ErrorDef, type IcebergErrorResponse } from '../errors.js'
import { ruleDoc } from '../engine/rules/index.js'
import type { Finding } from '../engine/rules/rule.js'
import { findingHead, findingLine } from '../engine/decide.js'

/** Seconds a client should wait before retrying a commit the gate could not judge. */
const RETRY_AFTER_SECONDS = 1

export interface GateAnswer {
  readonly statusCode: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: IcebergErrorResponse
}

/** An answer of the error catalogue (`src/errors.ts`): its status and Iceberg type, this message. */
export function answer (error: ErrorDef, message: string, stack?: readonly string[], headers: Record<string, string> = {}): GateAnswer {
  return { statusCode: error.status, headers, body: errorBody(error.status, error.type, message, stack) }
}

/**
 * The refusal of a commit whose findings include errors. `tables` maps a table to its findings;
 * one table for updateTable/createTable, several for a transaction (all-or-nothing).
 */
export function rejection (
  tables: ReadonlyArray<{ readonly table: string, readonly errors: readonly Finding[] }>,
  opts: { readonly docs?: string, readonly nameTables?: boolean } = {}
): GateAnswer {
  const multi = opts.nameTables ?? tables.length > 1
  const lines: string[] = []
  const rules = new Set<string>()
  for (const t of tables) {
    for (const f of t.errors) {
      lines.push(findingLine(f, multi ? t.table : undefined))
      rules.add(f.rule)
    }
  }
  const names = tables.map(t => t.table).join(', ')
  const count = lines.length === 1 ? '1 finding' : `${lines.length} findings`
  const docs = [...rules].map(r => ruleDoc(r, opts.docs)).join(', ')
  // Each rule's own advice (why it matters, what to do instead), once per distinct text.
  const explanations = [...new Set(tables.flatMap(t => t.errors.map(f => f.explanation))
    .filter((e): e is string => e !== undefined && e !== ''))]
  const message = `Cannot commit schema change to ${names}: ${count}: ${lines.join('; ')}` +
    (explanations.length > 0 ? `. ${explanations.join(' ')}` : '') +
    (docs !== '' ? ` (see ${docs})` : '')
  // One type for every refusal, a 400 (a 409 reads as a stale base, which Java retries, and as
  // "table already exists" on a staged create). Java's ErrorHandlers raise a 400 typed
  // IllegalArgumentException as that exception, which Spark shows as "Unsupported table change: …";
  // any other 400 type becomes BadRequestException("Malformed request: …"). docs/engines.md quotes
  // what Spark, PyIceberg and DuckDB show.
  return answer(ERRORS.REFUSED, message, lines)
}

/** A requirement of `table`'s change that does not hold against the table as it is now. */
export interface FailedRequirement { readonly table: string, readonly type: string, readonly message: string }

/**
 * Requirements that do not hold against the tables as they are now, answered in the catalog's own
 * words: the message is the first failure's text as Iceberg's catalogs raise it
 * (`UpdateRequirement.validate` stops at the first: "Requirement failed: current schema changed:
 * expected id 1 != 2"), so a client reads the same 409 whether iceguard or the catalog saw the
 * stale base (Iceberg's own catalog tests compare it); `stack` names every failure, its table and
 * requirement type.
 */
export function conflict (failed: readonly FailedRequirement[]): GateAnswer {
  const message = failed[0]?.message ?? 'Requirement failed'
  return answer(ERRORS.COMMIT_CONFLICT, message, failed.map(f => `${f.table}: ${f.type}: ${f.message}`))
}

/** The upstream could not be consulted, or reached, and nothing was forwarded: a definite failure, safe to retry. */
export function upstreamUnavailable (message: string, retryAfter: number = RETRY_AFTER_SECONDS): GateAnswer {
  return answer(ERRORS.UPSTREAM_UNAVAILABLE, `${message}; nothing was committed, retry later`,
    undefined, { 'retry-after': String(retryAfter) })
}

export function badRequest (message: string): GateAnswer {
  return answer(ERRORS.BAD_REQUEST, message)
}

/**
 * Findings let through, as one header line: `RULE (path, field id N, old -> new); …`.
 * Header values must be single-line visible ASCII, so anything else is percent-escaped, and the
 * line is bounded (the audit line keeps the full list).
 */
export function warningsHeader (findings: ReadonlyArray<{ readonly table?: string, readonly finding: Finding }>, max = 2048): string | undefined {
  if (findings.length === 0) return undefined
  const parts = findings.map(({ table, finding }) => findingHead(finding, table))
  let out = ''
  for (let i = 0; i < parts.length; i++) {
    const next = headerSafe(parts[i] ?? '')
    const candidate = out === '' ? next : `${out}; ${next}`
    if (candidate.length > max) return `${out}; +${parts.length - i} more`
    out = candidate
  }
  return out
}

function headerSafe (s: string): string {
  let out = ''
  for (const ch of s) {
    const c = ch.codePointAt(0) ?? 0
    if (c >= 0x20 && c < 0x7f && ch !== '%') out += ch
    else {
      try { out += encodeURIComponent(ch) } catch { out += '?' } // a lone surrogate
    }
  }
  return out
}
