/**
 * Iceberg's own catalog test suites (CatalogTests and ViewCatalogTests of iceberg-core's test jar,
 * run by the Maven module interop/catalog-tests with Iceberg's RESTCatalog) twice: straight against
 * a fresh Iceberg REST fixture (the baseline), then through iceguard (`builtin:spec`) in front of
 * another fresh fixture. Every test the baseline passes must pass through iceguard, unless
 * interop/catalog-tests/expected-refusals.txt lists it with the rule that refuses its change; such
 * a test must then fail with iceguard's refusal naming that rule.
 *
 * iceguard runs in this process (startProxy) rather than as a spawned server: it runs the source
 * under test without a build step (a spawned dist/ could be stale), and is built from the same
 * Config as in every other suite here.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { startProxy } from '../helpers/proxy.js'
import { systemTool } from '../helpers/system-tool.js'
import { startFixture, type RunningFixture } from './helpers/fixture.js'
import { counts, readReports, type TestResult } from './helpers/surefire.js'
import { cacheDir, interopDir, needToolchain, toolchainSkip } from './helpers/toolchain.js'

const mvn = systemTool(['mvn'], 'apt-get install maven')
const skip = toolchainSkip(['java', 'fixture']) || mvn.skip
const moduleDir = join(interopDir, 'catalog-tests')

/** A listed test: the rule whose refusal it must show, and why the change is refused. */
interface ExpectedRefusal { readonly rule: string, readonly reason: string }

/** expected-refusals.txt: `<Class>.<test>  <RULE_ID>  <reason>` a line, `#` comments. */
function expectedRefusals (): Map<string, ExpectedRefusal> {
  const listed = new Map<string, ExpectedRefusal>()
  for (const line of readFileSync(join(moduleDir, 'expected-refusals.txt'), 'utf8').split('\n')) {
    if (line.trim() === '' || line.startsWith('#')) continue
    const [id, rule, ...reason] = line.trim().split(/\s+/)
    if (id !== undefined && rule !== undefined) listed.set(id, { rule, reason: reason.join(' ') })
  }
  return listed
}

/**
 * Runs the module's tests against `uri` (offline: interop:setup fetched everything) and reads the
 * reports. The tests' own failures do not fail Maven (testFailureIgnore); anything else does.
 */
async function runCatalogTests (uri: string, reports: string): Promise<{ results: Map<string, TestResult>, output: string, ms: number }> {
  const started = Date.now()
  const args = ['-o', '-q', '-B', '--no-transfer-progress', '-f', join(moduleDir, 'pom.xml'), 'test',
    `-Dcatalog.uri=${uri}`, `-Dcatalog.reports=${reports}`, `-Dinterop.cache=${cacheDir}`]
  let output = ''
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn('mvn', args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, MAVEN_OPTS: '-XX:TieredStopAtLevel=1 -XX:+UseSerialGC' } })
    child.stdout.on('data', (b: Buffer) => { output += b.toString() })
    child.stderr.on('data', (b: Buffer) => { output += b.toString() })
    child.once('error', reject)
    child.once('exit', resolve)
  })
  if (code !== 0) throw new Error(`mvn exited with ${String(code)}:\n${output.slice(-4000)}`)
  return { results: readReports(reports), output, ms: Date.now() - started }
}

function describe (r: TestResult | undefined): string {
  if (r === undefined) return 'did not run'
  if (r.outcome !== 'failed') return r.outcome
  return `failed: ${r.type ?? ''}: ${(r.message ?? '').trim().slice(0, 600)}`
}

t.test('Iceberg\'s catalog tests through iceguard', { skip }, async t => {
  if (!needToolchain(t, ['java', 'fixture']) || mvn.need(t) === undefined) return
  const reports = mkdtempSync(join(tmpdir(), 'catalog-tests-'))
  const fixtures: RunningFixture[] = []
  t.teardown(async () => {
    await Promise.all(fixtures.map(async f => { await f.stop() }))
    rmSync(reports, { recursive: true, force: true })
  })
  // The tests empty the catalog they run against and demand an empty one: each run gets its own.
  const [direct, behind] = await Promise.all([startFixture(), startFixture()])
  fixtures.push(direct, behind)

  const baseline = await runCatalogTests(direct.url, join(reports, 'baseline'))
  // One Maven run costs most of a minute, so iceguard runs on the default transport (the fast
  // lane); ICEGUARD_TEST_TRANSPORT=node:http runs it on the node:http path instead.
  const nodeHttp = process.env.ICEGUARD_TEST_TRANSPORT === 'node:http'
  const proxy = await startProxy(t, { upstream: behind.url, policy: 'builtin:spec', ...(nodeHttp && { 'fast-lane': 'off' }) })
  const through = await runCatalogTests(proxy.url, join(reports, 'iceguard'))

  const before = counts(baseline.results)
  const after = counts(through.results)
  t.comment(`baseline (the fixture): ${before.passed} passed, ${before.failed} failed, ${before.skipped} skipped in ${Math.round(baseline.ms / 1000)} s`)
  t.comment(`through iceguard: ${after.passed} passed, ${after.failed} failed, ${after.skipped} skipped in ${Math.round(through.ms / 1000)} s`)
  t.ok(before.passed > 100, `the baseline ran Iceberg's suites (${before.passed} passed)`)
  t.same([...through.results.keys()].sort(), [...baseline.results.keys()].sort(), 'both runs ran the same tests')

  const listed = expectedRefusals()
  for (const [id, base] of baseline.results) {
    if (base.outcome !== 'passed') continue
    const result = through.results.get(id)
    const refusal = listed.get(id)
    if (refusal === undefined) {
      t.equal(result?.outcome, 'passed', `${id} passes through iceguard as it does against the fixture${result?.outcome === 'passed' ? '' : ` (${describe(result)})`}`)
    } else {
      t.equal(result?.outcome, 'failed', `${id} is refused (${refusal.rule}: ${refusal.reason})`)
      t.match(result?.message ?? '', refusal.rule, `${id}: the refusal names ${refusal.rule} (${describe(result)})`)
    }
  }
  for (const id of listed.keys()) {
    t.equal(baseline.results.get(id)?.outcome, 'passed', `${id}, listed as refused, passes against the fixture (${describe(baseline.results.get(id))})`)
  }
})
