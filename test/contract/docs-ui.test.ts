/**
 * Swagger UI at /docs renders in a real browser: headless Chromium from Debian's packages
 * (`apt-get install chromium`) loads the page, runs its scripts against /openapi and dumps the DOM.
 * Skipped, saying so, where Chromium is not installed; required under CI.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { startProxy } from '../helpers/index.js'
import { systemTool } from '../helpers/system-tool.js'

const chromium = systemTool(['chromium', 'chromium-browser'], 'apt-get install chromium')

function dumpDom (browser: string, url: string): Promise<{ code: number | null, dom: string, stderr: string }> {
  const profile = mkdtempSync(join(tmpdir(), 'iceguard-chromium-'))
  return new Promise((resolve, reject) => {
    const child = spawn(browser, [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage', `--user-data-dir=${profile}`,
      // Swagger UI renders after fetching the document; give its scripts time before the dump.
      '--virtual-time-budget=15000', '--dump-dom', url
    ], { stdio: ['ignore', 'pipe', 'pipe'] })
    let dom = ''
    let stderr = ''
    child.stdout.on('data', (c: Buffer) => { dom += c.toString() })
    child.stderr.on('data', (c: Buffer) => { stderr += c.toString() })
    child.on('error', reject)
    child.on('close', (code) => {
      rmSync(profile, { recursive: true, force: true })
      resolve({ code, dom, stderr })
    })
  })
}

t.test('/docs renders the operations in headless Chromium', { skip: chromium.skip }, async (t) => {
  const browser = chromium.need(t)
  if (browser === undefined) return
  const proxy = await startProxy(t, { upstream: 'http://127.0.0.1:9' })
  const { code, dom, stderr } = await dumpDom(browser, `${proxy.url}/docs/`)
  if (code !== 0) t.comment(stderr.slice(-2000))
  t.equal(code, 0, 'chromium exited cleanly')
  t.match(dom, /class="swagger-ui/, 'Swagger UI mounted')
  t.match(dom, /iceguard/, 'the document title is shown')
  for (const op of ['/admin/v1/validate', '/admin/v1/diff', '/admin/v1/namespaces/{namespace}/tables/{table}/schemas', '/admin/v1/rules', '/admin/v1/policy/effective', '/healthz', '/v1/transactions/commit']) {
    t.ok(dom.includes(op), `operation ${op} rendered`)
  }
  t.match(dom, /Dry-run a commit/, 'operation summaries rendered')
})
