/**
 * Surefire's XML reports (one `TEST-<class>.xml` per test class) read into one outcome per test:
 * `<testcase>` with a `<failure>` (an assertion failed) or an `<error>` (anything else thrown) child
 * failed, with a `<skipped>` child was skipped, with neither passed. The failure's `message` and
 * `type` attributes are the thrown exception's message and class.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

export type Outcome = 'passed' | 'failed' | 'skipped'

export interface TestResult {
  /** `<simple class name>.<test name>`, e.g. `RestCatalogTests.testDropNamespace`. */
  readonly id: string
  readonly outcome: Outcome
  /** For a failed test: the exception's class and message (entities decoded). */
  readonly type?: string
  readonly message?: string
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: '\'' }

function decode (text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|\w+);/gi, (whole, name: string) => {
    if (name.startsWith('#x') || name.startsWith('#X')) return String.fromCodePoint(parseInt(name.slice(2), 16))
    if (name.startsWith('#')) return String.fromCodePoint(parseInt(name.slice(1), 10))
    return ENTITIES[name] ?? whole
  })
}

function attribute (tag: string, name: string): string | undefined {
  const m = new RegExp(`\\s${name}="([^"]*)"`).exec(tag)
  return m === null ? undefined : decode(m[1] ?? '')
}

/** The test cases of one report's text. */
export function parseReport (xml: string): TestResult[] {
  const results: TestResult[] = []
  const cases = /<testcase\b([^>]*?)(\/>|>([\s\S]*?)<\/testcase>)/g
  for (const m of xml.matchAll(cases)) {
    const open = m[1] ?? ''
    // Output the test printed (CDATA) is no part of its outcome, whatever it says.
    const body = (m[3] ?? '').replace(/<!\[CDATA\[[\s\S]*?\]\]>/g, '')
    const name = attribute(open, 'name') ?? '?'
    const className = (attribute(open, 'classname') ?? '?').split('.').at(-1) ?? '?'
    const id = `${className}.${name}`
    const failure = /<(failure|error)\b([^>]*?)(\/>|>)/.exec(body)
    if (failure !== null) {
      results.push({ id, outcome: 'failed', type: attribute(failure[2] ?? '', 'type'), message: attribute(failure[2] ?? '', 'message') ?? '' })
    } else if (/<skipped\b/.test(body)) {
      results.push({ id, outcome: 'skipped' })
    } else {
      results.push({ id, outcome: 'passed' })
    }
  }
  return results
}

/** Every test of every report in `dir`, by id. */
export function readReports (dir: string): Map<string, TestResult> {
  const byId = new Map<string, TestResult>()
  for (const file of readdirSync(dir).filter(f => f.startsWith('TEST-') && f.endsWith('.xml')).sort()) {
    for (const result of parseReport(readFileSync(join(dir, file), 'utf8'))) byId.set(result.id, result)
  }
  return byId
}

export function counts (results: Map<string, TestResult>): Record<Outcome, number> {
  const c: Record<Outcome, number> = { passed: 0, failed: 0, skipped: 0 }
  for (const r of results.values()) c[r.outcome]++
  return c
}
