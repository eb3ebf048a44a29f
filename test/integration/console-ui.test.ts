/**
 * The console in a real browser: headless Chromium from Debian's packages, driven over the DevTools
 * protocol. A person signs in with the form, follows the decisions and opens a table; the test
 * reads what the page shows (the rendered text and elements), not only that it loads. Skipped,
 * saying so, where Chromium is not installed; required under CI.
 */
import t from 'tap'
import { memoryDecisionSource } from '../../src/console/decision-source.js'
import { memoryOverrideSource } from '../../src/console/override-source.js'
import { startCatalog, startProxy } from '../helpers/index.js'
import { startBrowser } from '../helpers/chromium-cdp.js'
import { DECISIONS, HOSTILE, makeOrdersHistory, OVERRIDES } from '../helpers/console-fixtures.js'
import { systemTool } from '../helpers/system-tool.js'

const chromium = systemTool(['chromium', 'chromium-browser'], 'apt-get install chromium')
const STATIC = 'console-ui-static-token'

t.test('sign in, filter the decisions, open a table: what the page shows', { skip: chromium.skip }, async t => {
  const executable = chromium.need(t)
  if (executable === undefined) return
  const catalog = await startCatalog(t)
  await makeOrdersHistory(catalog.url)
  const proxy = await startProxy(t, {
    upstream: catalog.url,
    policy: new URL('../fixtures/cli/policy.yaml', import.meta.url).pathname,
    env: { ICEGUARD_ADMIN_TOKEN: STATIC },
    app: { console: { decisions: memoryDecisionSource(DECISIONS), overrides: memoryOverrideSource(OVERRIDES) } }
  })
  const browser = await startBrowser(t, executable)
  const page = await browser.newPage()

  await page.goto(`${proxy.url}/console/decisions`)
  t.equal(await page.evaluate('document.title'), 'Sign in · iceguard', 'not signed in: the sign-in page')
  t.equal(await page.evaluate('document.querySelectorAll("[data-decision]").length'), 0, 'and no decision shown')

  await page.evaluate(`document.querySelector('input[name=token]').value = ${JSON.stringify(STATIC)}; document.querySelector('form[action="/console/login"]').submit()`, { navigates: true })
  t.equal(await page.evaluate('location.pathname'), '/console/decisions', 'signed in, redirected to the decisions')
  t.equal(await page.evaluate('document.cookie'), '', 'the token cookie is HttpOnly: no script can read it')
  const rows = await page.evaluate<string[]>('[...document.querySelectorAll("[data-decision]")].map(r => r.dataset.decision)')
  t.same(rows, ['d-3', 'd-2', 'd-1'], 'newest first')
  const hostileRow = await page.evaluate<string>('document.querySelector("[data-decision=d-3]").innerText')
  t.ok(hostileRow.includes(HOSTILE), 'markup in user input is shown as text')
  t.equal(await page.evaluate('document.querySelectorAll("img").length'), 0, 'and creates no element')
  t.equal(await page.evaluate('document.querySelectorAll("main script, main b").length'), 0)

  // Filter by verdict with the form, as a person would.
  await page.evaluate('document.querySelector("select[name=verdict]").value = "deny"; document.querySelector("form.filters").submit()', { navigates: true })
  t.equal(await page.evaluate('location.search'), '?namespace=&table=&verdict=deny&rule=')
  t.same(await page.evaluate('[...document.querySelectorAll("[data-decision]")].map(r => r.dataset.decision)'), ['d-2'])
  const deny = await page.evaluate<string>('document.querySelector("[data-decision=d-2]").innerText')
  t.match(deny, /\bdeny\b/, 'the verdict')
  t.match(deny, /COLUMN_NO_DROP/, 'the rule that stopped it')
  t.match(deny, /field id 3/, 'the field, by id')
  t.equal(await page.evaluate('getComputedStyle(document.querySelector(".verdict-deny")).backgroundColor'), 'rgb(253, 226, 225)', 'the inline stylesheet applies')

  // Open the decision from its row, then follow its table link.
  await page.evaluate('document.querySelector("[data-decision=d-2] a[href=\\"/console/decisions/d-2\\"]").click()', { navigates: true })
  t.equal(await page.evaluate('location.pathname'), '/console/decisions/d-2', 'the row opens its decision')
  t.equal(await page.evaluate('document.querySelector("h1").innerText'), 'Decision d-2')
  const fields = await page.evaluate<string>('document.querySelector("dl.decision").innerText')
  t.match(fields, /Verdict\s+deny/, 'the verdict')
  t.match(fields, /Principal\s+alice/, 'who wrote')
  const finding = await page.evaluate<string>('document.querySelector("ul.findings li").innerText')
  t.match(finding, /^COLUMN_NO_DROP error · field id 3 · quantity: Cannot drop column quantity/, 'the finding, by field id')
  t.equal(await page.evaluate('document.querySelector("ul.findings a").getAttribute("href")'), '/rules/COLUMN_NO_DROP', 'its rule links to the rule page')
  t.match(await page.evaluate<string>('document.body.innerText'), /No override was used/)
  await page.evaluate('document.querySelector("dl.decision a[href^=\\"/console/tables/\\"]").click()', { navigates: true })
  t.equal(await page.evaluate('location.pathname'), '/console/tables/db/orders')
  t.equal(await page.evaluate('document.querySelector("h1").innerText'), 'Table db.orders')
  const rename = await page.evaluate<string>('document.querySelector("[data-change=rename]").innerText')
  t.match(rename, /^rename field id 2: customer → buyer$/, 'a rename shown as the rename of field id 2')
  t.equal(await page.evaluate('document.querySelector("[data-change=rename]").closest("[data-schema-id]").dataset.schemaId'), '1', 'in schema 1')
  const drop = await page.evaluate<string>('document.querySelector("[data-change=drop]").innerText')
  t.match(drop, /^drop field id 3: quantity \(int\)$/, 'the drop marked')
  t.equal(await page.evaluate('document.querySelector("[data-change=drop]").closest("[data-schema-id]").dataset.schemaId'), '2', 'in schema 2')
  const lineage3 = await page.evaluate<string>('document.querySelector("table.lineage tr[data-field-id=\\"3\\"]").innerText')
  t.match(lineage3, /dropped\s+in schema 2/, 'lineage marks field id 3 dropped')
  const lineage2 = await page.evaluate<string>('document.querySelector("table.lineage tr[data-field-id=\\"2\\"]").innerText')
  t.match(lineage2, /customer\s+renamed to\s+buyer/, 'lineage follows field id 2 through its rename')
  const added = await page.evaluate<string>('document.querySelector("[data-change=add][data-field-id=\\"4\\"]").innerText')
  t.ok(added.includes(HOSTILE), 'the hostile column name is text on the page')
  t.equal(await page.evaluate('document.querySelectorAll("img").length'), 0)
  t.match(await page.evaluate<string>('document.body.innerText'), /Overrides in force[\s\S]*ovr-1/, 'the override in force')

  // Sign out: the next page asks again.
  await page.evaluate('document.querySelector("form[action=\\"/console/logout\\"]").submit()', { navigates: true })
  await page.goto(`${proxy.url}/console/tables/db/orders`)
  t.equal(await page.evaluate('document.title'), 'Sign in · iceguard', 'signed out')
})
