/**
 * Renders a dry-run result for people and for CI: plain text, the admin API's JSON, JUnit XML
 * (CI dashboards) and GitHub Actions workflow commands (annotations on the pull request), the
 * formats `buf breaking --error-format` made familiar.
 */
import type { TableValidation, ValidateResponse } from '../schemas/validate.js'
import type { WireFinding } from '../schemas/finding.js'

export const FORMATS = ['text', 'json', 'junit', 'github'] as const
export type ReportFormat = typeof FORMATS[number]

export function isReportFormat (s: string): s is ReportFormat {
  return (FORMATS as readonly string[]).includes(s)
}

/** What the report is about: the file the request came from, for annotations. */
export interface ReportContext {
  readonly requestFile: string
}

type TableResult = Omit<TableValidation, 'table'> & { readonly table?: TableValidation['table'] }

function tablesOf (r: ValidateResponse): TableResult[] {
  return r.tables !== undefined && r.tables.length > 0 ? r.tables : [r]
}

function tableName (t: TableResult): string {
  return t.table === undefined ? 'table' : [...t.table.namespace, t.table.name].join('.')
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
    case 'text': return renderText(r)
  }
}

function renderText (r: ValidateResponse): string {
  const lines: string[] = []
  for (const t of tablesOf(r)) {
    lines.push(`${tableName(t)}: ${t.verdict}`)
    if (t.changes.length > 0) {
      lines.push('  changes:')
      for (const line of t.summary.split('\n')) if (line.trim() !== '') lines.push(`    ${line}`)
    }
    for (const f of t.findings) {
      lines.push(`  ${f.severity.padEnd(5)} ${f.rule}${where(f)}: ${f.message}`)
      if (f.explanation !== undefined) lines.push(`        ${f.explanation}`)
      lines.push(`        see ${f.doc}`)
    }
    for (const c of t.conflicts ?? []) lines.push(`  conflict: ${c}`)
  }
  if (r.tables !== undefined && r.tables.length > 1) lines.push(`transaction: ${r.verdict}`)
  lines.push(r.explanation)
  return lines.join('\n') + '\n'
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
    const name = tableName(t)
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

function renderGithub (r: ValidateResponse, ctx: ReportContext): string {
  const lines: string[] = []
  for (const t of tablesOf(r)) {
    const name = tableName(t)
    for (const f of t.findings) {
      const level = f.severity === 'error' ? 'error' : 'warning'
      const title = `${f.rule} (${name}${f.path === undefined ? '' : ` ${f.path}`})`
      lines.push(`::${level} file=${ghProp(ctx.requestFile)},title=${ghProp(title)}::${ghData(`${f.message} — see ${f.doc}`)}`)
    }
    for (const c of t.conflicts ?? []) {
      lines.push(`::error file=${ghProp(ctx.requestFile)},title=${ghProp(`conflict (${name})`)}::${ghData(c)}`)
    }
  }
  lines.push(`::notice title=${ghProp(`iceguard: ${r.verdict}`)}::${ghData(r.explanation)}`)
  return lines.join('\n') + '\n'
}
