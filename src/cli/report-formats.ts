/**
 * Renders a dry-run result for people and for CI: plain text, the admin API's JSON, JUnit XML
 * (CI dashboards), GitHub Actions workflow commands (annotations on the pull request) and a GitLab
 * Code Quality report (findings in the merge request), the formats `buf breaking --error-format`
 * made familiar.
 */
import { createHash } from 'node:crypto'
import type { TableValidation, ValidateResponse } from '../schemas/validate.js'
import type { WireFinding } from '../schemas/finding.js'
import type { RequestLines } from './request-lines.js'
import { tableName } from '../iceberg/rest-path.js'

export const FORMATS = ['text', 'json', 'junit', 'github', 'gitlab'] as const
type ReportFormat = typeof FORMATS[number]

export function isReportFormat (s: string): s is ReportFormat {
  return (FORMATS as readonly string[]).includes(s)
}

/** What the report is about: the file the request came from, and where in it each finding belongs. */
interface ReportContext {
  readonly requestFile: string
  readonly lines?: RequestLines
}

type TableResult = Omit<TableValidation, 'table'> & { readonly table?: TableValidation['table'] }

function tablesOf (r: ValidateResponse): TableResult[] {
  return r.tables !== undefined && r.tables.length > 0 ? r.tables : [r]
}

function resultName (t: TableResult): string {
  return t.table === undefined ? 'table' : tableName(t.table)
}

function where (f: WireFinding): string {
  const parts: string[] = []
  if (f.path !== undefined) parts.push(f.path)
  if (f['field-id'] !== undefined) parts.push(`id ${f['field-id']}`)
  return parts.length > 0 ? ` ${parts.join(', ')}` : ''
}

export function renderReport (r: ValidateResponse, format: ReportFormat, ctx: ReportContext): string {
  switch (format) {
    case 'json': return JSON.stringify(r, null, 2) + '\n'
    case 'junit': return renderJunit(r)
    case 'github': return renderGithub(r, ctx)
    case 'gitlab': return renderGitlab(r, ctx)
    case 'text': return renderText(r)
  }
}

function renderText (r: ValidateResponse): string {
  const lines: string[] = []
  for (const t of tablesOf(r)) {
    lines.push(`${resultName(t)}: ${t.verdict}`)
    if (t.changes.length > 0) {
      lines.push('  changes:')
      for (const line of t.summary.split('\n')) if (line.trim() !== '') lines.push(`    ${line}`)
    }
    for (const f of t.findings) {
      lines.push(`  ${f.severity.padEnd(5)} ${f.rule}${where(f)}${f.overridden === true ? ' [overridden]' : ''}: ${f.message}`)
      if (f.explanation !== undefined) lines.push(`        ${f.explanation}`)
      lines.push(`        see ${f.doc}`)
    }
    for (const c of t.conflicts ?? []) lines.push(`  conflict: ${c}`)
    const views = t['affected-views'] ?? []
    if (views.length > 0) lines.push(`  views it would break: ${views.map(v => [...v.identifier.namespace, v.identifier.name].join('.')).join(', ')}`)
  }
  if (r.tables !== undefined && r.tables.length > 1) lines.push(`transaction: ${r.verdict}`)
  if (r.override !== undefined) lines.push(overrideLine(r.override))
  lines.push(r.explanation)
  return lines.join('\n') + '\n'
}

/** A finding of a schema-changes, plan or compatibility answer, in one line (evolve and compatibility print the same). */
export function answerFindingLine (f: { rule: string, severity: string, path?: string, message: string, overridden?: boolean }): string {
  return `${f.severity} ${f.rule}${f.path !== undefined ? ` ${f.path}` : ''}${f.overridden === true ? ' [overridden]' : ''}: ${f.message}`
}

/** The override an answer carries, in one line (check and evolve print the same). */
export function overrideLine (o: { id: string, table: string, rules: readonly string[], reason: string, 'expires-at': string }): string {
  return `override ${o.id} for ${o.table} (${o.rules.join(', ')}, until ${o['expires-at']}): ${o.reason}`
}

function xml (s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;')
    // XML 1.0 forbids most control characters even when escaped.
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F]/g, '')
}

/** One test suite per table; one test case per finding (errors fail, warnings pass with output), or one passing case when clean. */
function renderJunit (r: ValidateResponse): string {
  const suites: string[] = []
  let tests = 0
  let failures = 0
  for (const t of tablesOf(r)) {
    const name = resultName(t)
    const cases: string[] = []
    let suiteFailures = 0
    for (const f of t.findings) {
      const caseName = xml(`${f.rule}${where(f)}`)
      if (f.severity === 'error') {
        suiteFailures++
        cases.push(`    <testcase classname="${xml(name)}" name="${caseName}">\n      <failure message="${xml(f.message)}" type="${xml(f.rule)}">${xml([f.message, f.explanation, `see ${f.doc}`].filter(Boolean).join('\n'))}</failure>\n    </testcase>`)
      } else {
        cases.push(`    <testcase classname="${xml(name)}" name="${caseName}">\n      <system-out>${xml(`warning: ${f.message}\nsee ${f.doc}`)}</system-out>\n    </testcase>`)
      }
    }
    for (const c of t.conflicts ?? []) {
      suiteFailures++
      cases.push(`    <testcase classname="${xml(name)}" name="conflict">\n      <failure message="${xml(c)}" type="conflict">${xml(c)}</failure>\n    </testcase>`)
    }
    if (cases.length === 0) cases.push(`    <testcase classname="${xml(name)}" name="schema change is allowed"/>`)
    tests += cases.length
    failures += suiteFailures
    suites.push(`  <testsuite name="iceguard ${xml(name)}" tests="${cases.length}" failures="${suiteFailures}" errors="0">\n${cases.join('\n')}\n  </testsuite>`)
  }
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="iceguard" tests="${tests}" failures="${failures}" errors="0">\n${suites.join('\n')}\n</testsuites>\n`
}

// GitHub workflow commands: data escapes %, CR, LF; property values also escape ':' and ','.
function ghData (s: string): string {
  return s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A')
}
function ghProp (s: string): string {
  return ghData(s).replace(/:/g, '%3A').replace(/,/g, '%2C')
}

/** The conflict's requirement type: conflicts read `assert-current-schema-id: Requirement failed…`. */
function conflictType (c: string): string {
  return c.slice(0, Math.max(0, c.indexOf(':')))
}

function renderGithub (r: ValidateResponse, ctx: ReportContext): string {
  const at = (line: number | undefined): string => `file=${ghProp(ctx.requestFile)}${line === undefined ? '' : `,line=${line}`}`
  const lines: string[] = []
  for (const t of tablesOf(r)) {
    const name = resultName(t)
    for (const f of t.findings) {
      const level = f.severity === 'error' ? 'error' : 'warning'
      const title = `${f.rule} (${name}${f.path === undefined ? '' : ` ${f.path}`})`
      lines.push(`::${level} ${at(ctx.lines?.field(f['field-id']))},title=${ghProp(title)}::${ghData(`${f.message} — see ${f.doc}`)}`)
    }
    for (const c of t.conflicts ?? []) {
      lines.push(`::error ${at(ctx.lines?.requirement(conflictType(c)))},title=${ghProp(`conflict (${name})`)}::${ghData(c)}`)
    }
  }
  lines.push(`::notice title=${ghProp(`iceguard: ${r.verdict}`)}::${ghData(r.explanation)}`)
  return lines.join('\n') + '\n'
}

/**
 * GitLab Code Quality (`artifacts:reports:codequality`): a JSON array of issues with description,
 * check_name, fingerprint, severity (info, minor, major, critical, blocker) and location. An error
 * blocks the commit at the gate; a conflict means the request was built on an older table.
 */
function renderGitlab (r: ValidateResponse, ctx: ReportContext): string {
  const issues: unknown[] = []
  const seen = new Map<string, number>()
  const add = (table: string, check: string, where: string, description: string, severity: string, line: number | undefined): void => {
    // Stable across runs (no line: an edit above must not make it a new issue), unique per issue.
    const key = [ctx.requestFile, table, check, where].join('\0')
    const n = (seen.get(key) ?? 0) + 1
    seen.set(key, n)
    const fingerprint = createHash('sha256').update(`${key}\0${n}`).digest('hex').slice(0, 32)
    issues.push({ description, check_name: check, fingerprint, severity, location: { path: ctx.requestFile, lines: { begin: line ?? 1 } } })
  }
  for (const t of tablesOf(r)) {
    const name = resultName(t)
    for (const f of t.findings) {
      add(name, f.rule, `${f['field-id'] ?? ''} ${f.path ?? ''}`, `${name}: ${f.message} (see ${f.doc})`, f.severity === 'error' ? 'blocker' : 'minor', ctx.lines?.field(f['field-id']))
    }
    for (const c of t.conflicts ?? []) {
      add(name, 'conflict', conflictType(c), `${name}: ${c}`, 'major', ctx.lines?.requirement(conflictType(c)))
    }
  }
  return JSON.stringify(issues, null, 2) + '\n'
}
