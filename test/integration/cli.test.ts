import { spawnSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { parse as parseYaml } from 'yaml'
import { CHECK_USAGE } from '../../src/cli/check.js'
import { run } from '../../src/cli/main.js'
import { EXIT } from '../../src/cli/exit-codes.js'
import type { CliIo } from '../../src/cli/cli-io.js'
import { verifyOverride } from '../../src/policy/override-token.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
const fx = 'test/fixtures/cli'

async function cli (args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number, out: string, err: string }> {
  let out = ''
  let err = ''
  const io: CliIo = { stdout: (s) => { out += s }, stderr: (s) => { err += s }, env, cwd: root }
  const code = await run(args, io)
  return { code, out, err }
}

const check = (request: string, ...more: string[]) =>
  ['check', '--metadata', `${fx}/table-metadata.json`, '--request', `${fx}/${request}.json`, ...more]
/** The fixtures but add-optional-column have no identifier: the table is named. */
const checkOrders = (request: string, ...more: string[]) => check(request, '--table', 'db.orders', ...more)

t.test('check: the exit code follows the verdict', async (t) => {
  t.equal((await cli(check('add-optional-column'))).code, EXIT.OK, 'allow → 0')
  t.equal((await cli(checkOrders('drop-column'))).code, EXIT.OK, 'warn (recommended policy) → 0')
  t.equal((await cli(checkOrders('narrow-type'))).code, EXIT.DENY, 'deny → 1')
  t.equal((await cli(checkOrders('stale-base'))).code, EXIT.CONFLICT, 'conflict → 2')
  t.equal((await cli(check('drop-column', '--table', 'db.orders', '--policy', `${fx}/policy.yaml`))).code, EXIT.DENY, 'the policy makes the drop an error')
})

t.test('check --format text names rule, field and doc', async (t) => {
  const { out } = await cli(check('narrow-type', '--table', 'db.orders'))
  t.match(out, /^db\.orders: deny/)
  t.match(out, /error TYPE_PROMOTION_VALID quantity, id 3: Cannot change column type/)
  t.match(out, /see \/rules\/TYPE_PROMOTION_VALID$/m, 'the rule page iceguard serves')
  const served = await cli(check('narrow-type', '--table', 'db.orders'), { ICEGUARD_PUBLIC_URL: 'https://iceguard.example.com/' })
  t.match(served.out, /see https:\/\/iceguard\.example\.com\/rules\/TYPE_PROMOTION_VALID$/m, 'under ICEGUARD_PUBLIC_URL when set')
  t.match(out, /retyped\s+3 quantity: int -> string/)
})

t.test('check --format json is the admin validate answer, 64-bit ids intact', async (t) => {
  const { out, code } = await cli(check('add-optional-column', '--format', 'json'))
  t.equal(code, EXIT.OK)
  const body = JSON.parse(out)
  t.equal(body.verdict, 'allow')
  t.same(body.table, { namespace: ['db'], name: 'orders' }, 'table from the request identifier')
  t.equal(body.changes[0].kind, 'field-added')
  t.equal(body.changes[0]['field-id'], 4)
  t.same(body.findings, [])

  const deny = JSON.parse((await cli(checkOrders('narrow-type', '--format', 'json'))).out)
  t.equal(deny.verdict, 'deny')
  t.match(deny.findings[0], { rule: 'TYPE_PROMOTION_VALID', severity: 'error', 'field-id': 3, path: 'quantity', 'old-type': 'int', 'new-type': 'string' })
})

t.test('check --format junit: one failing case per error, valid XML shape', async (t) => {
  const deny = (await cli(check('drop-column', '--table', 'db.orders', '--policy', `${fx}/policy.yaml`, '--format', 'junit'))).out
  t.match(deny, /^<\?xml version="1.0" encoding="UTF-8"\?>\n<testsuites name="iceguard" tests="2" failures="2" errors="0">/)
  t.match(deny, /<testcase classname="db\.orders" name="COLUMN_NO_DROP customer, id 2">\s*<failure message="Cannot drop column customer/)
  t.equal((deny.match(/<failure /g) ?? []).length, 2)
  const allow = (await cli(check('add-optional-column', '--format', 'junit'))).out
  t.match(allow, /tests="1" failures="0"/)
  t.match(allow, /<testcase classname="db\.orders" name="schema change is allowed"\/>/)
  const warn = (await cli(checkOrders('drop-column', '--format', 'junit'))).out
  t.match(warn, /failures="0"/)
  t.match(warn, /<system-out>warning: Cannot drop column customer/)
})

t.test('check --format github: workflow commands on the request\'s lines, escaped properties', async (t) => {
  const { out } = await cli(check('narrow-type', '--table', 'db.orders', '--format', 'github'))
  const lines = out.trim().split('\n')
  // quantity (id 3) is on line 7 of narrow-type.json, in the schema the request adds.
  t.match(lines[0], /^::error file=test\/fixtures\/cli\/narrow-type\.json,line=7,title=TYPE_PROMOTION_VALID \(db\.orders quantity\)::Cannot change column type/)
  t.match(lines.at(-1), /^::notice title=iceguard%3A deny::/, 'a colon in a property is escaped')
  // A dropped column is not in the new schema: the annotation goes on the schema (line 4).
  const warn = (await cli(checkOrders('drop-column', '--format', 'github'))).out
  t.match(warn, /^::warning file=test\/fixtures\/cli\/drop-column\.json,line=4,title=COLUMN_NO_DROP/m)
  // A conflict goes on the requirement that failed (line 2).
  const conflict = (await cli(checkOrders('stale-base', '--format', 'github'))).out
  t.match(conflict, /^::error file=test\/fixtures\/cli\/stale-base\.json,line=2,title=conflict \(db\.orders\)::assert-current-schema-id: Requirement failed/m)
})

t.test('check --format gitlab: a Code Quality report, one issue per finding, stable fingerprints', async (t) => {
  const run1 = await cli(checkOrders('drop-column', '--policy', `${fx}/policy.yaml`, '--format', 'gitlab'))
  t.equal(run1.code, EXIT.DENY, 'the exit code still follows the verdict')
  const issues = JSON.parse(run1.out) as Array<{ description: string, check_name: string, fingerprint: string, severity: string, location: { path: string, lines: { begin: number } } }>
  t.ok(Array.isArray(issues) && issues.length === 2, 'two error findings, two issues')
  const drop = issues.find(i => i.check_name === 'COLUMN_NO_DROP')
  t.match(drop, {
    description: /^db\.orders: Cannot drop column customer.*see \/rules\/COLUMN_NO_DROP/,
    severity: 'blocker',
    location: { path: 'test/fixtures/cli/drop-column.json', lines: { begin: 4 } }
  })
  for (const i of issues) {
    t.same(Object.keys(i).sort(), ['check_name', 'description', 'fingerprint', 'location', 'severity'], `${i.check_name}: the fields GitLab reads`)
    t.match(i.fingerprint, /^[0-9a-f]{32}$/)
  }
  t.equal(new Set(issues.map(i => i.fingerprint)).size, issues.length, 'fingerprints are unique')
  const run2 = JSON.parse((await cli(checkOrders('drop-column', '--policy', `${fx}/policy.yaml`, '--format', 'gitlab'))).out) as typeof issues
  t.same(run2.map(i => i.fingerprint), issues.map(i => i.fingerprint), 'and the same on every run')

  const narrow = JSON.parse((await cli(checkOrders('narrow-type', '--format', 'gitlab'))).out) as typeof issues
  t.match(narrow, [{ check_name: 'TYPE_PROMOTION_VALID', severity: 'blocker', location: { lines: { begin: 7 } } }], 'the field\'s own line')
  const warn = JSON.parse((await cli(checkOrders('drop-column', '--format', 'gitlab'))).out) as typeof issues
  t.match(warn, [{ check_name: 'COLUMN_NO_DROP', severity: 'minor' }], 'a warning is a minor issue')
  const conflict = JSON.parse((await cli(checkOrders('stale-base', '--format', 'gitlab'))).out) as typeof issues
  t.match(conflict, [{ check_name: 'conflict', severity: 'major', location: { lines: { begin: 2 } } }])
  const clean = await cli(check('add-optional-column', '--format', 'gitlab'))
  t.equal(clean.out, '[]\n', 'a clean change is an empty report')
})

t.test('check refuses to guess the table: policy scopes depend on it', async (t) => {
  const noTable = await cli(check('drop-column', '--policy', `${fx}/policy.yaml`))
  t.equal(noTable.code, EXIT.USAGE, 'no --table and no identifier: a usage error, not a verdict')
  t.match(noTable.err, /^iceguard: Cannot check test\/fixtures\/cli\/drop-column\.json: the table is unknown; name it with --table namespace\.table/)
  t.equal(noTable.out, '', 'no verdict printed')
  t.equal((await cli(checkOrders('drop-column', '--policy', `${fx}/policy.yaml`))).code, EXIT.DENY, 'named, the db.* scope makes the drop an error')
  t.equal((await cli(check('drop-column', '--table', 'finance.orders', '--policy', `${fx}/policy.yaml`))).code, EXIT.OK, 'outside db.* it is the preset\'s warning')

  const mismatch = await cli(check('add-optional-column', '--table', 'db.other'))
  t.equal(mismatch.code, EXIT.USAGE)
  t.match(mismatch.err, /--table db\.other does not match the request's identifier db\.orders/)

  const dir = t.testdir({
    'create.json': JSON.stringify({ name: 'orders', schema: { type: 'struct', fields: [{ id: 1, name: 'id', required: true, type: 'long' }] } })
  })
  const create = ['check', '--request', `${dir}/create.json`]
  const unnamed = await cli(create)
  t.equal(unnamed.code, EXIT.USAGE, 'a create names no namespace')
  t.match(unnamed.err, /the table is unknown/)
  t.equal((await cli([...create, '--table', 'db.orders'])).code, EXIT.OK, 'named, it is judged')
  const other = await cli([...create, '--table', 'db.invoices'])
  t.equal(other.code, EXIT.USAGE)
  t.match(other.err, /does not match the table the request creates, orders/)
})

t.test('check: usage and input errors exit 3 with a message', async (t) => {
  const cases: Array<[string[], RegExp]> = [
    [['check', '--request', `${fx}/narrow-type.json`, '--table', 'db.orders'], /needs the table's current metadata for a CommitTableRequest: --metadata <table\.json>, or --url/],
    [[...checkOrders('narrow-type'), '--url', 'http://127.0.0.1:9'], /--metadata or --url, not both/],
    [checkOrders('narrow-type', '--format', 'xml'), /Invalid --format "xml"/],
    [check('missing'), /Cannot read request test\/fixtures\/cli\/missing\.json: ENOENT/],
    [['check', '--metadata', `${fx}/narrow-type.json`, '--request', `${fx}/narrow-type.json`, '--table', 'db.orders'], /Cannot read table metadata/],
    [checkOrders('narrow-type', '--bogus'), /bogus/],
    [checkOrders('narrow-type', '--policy', `${fx}/invalid-policy.yaml`), /enforse/],
    [check('narrow-type', '--table', 'orders'), /Invalid --table "orders"/],
    [['frobnicate'], /Unknown command "frobnicate"/]
  ]
  for (const [args, message] of cases) {
    const r = await cli(args)
    t.equal(r.code, EXIT.USAGE, args.join(' '))
    t.match(r.err, message)
  }
})

t.test('diff: by field id, text and json', async (t) => {
  const text = await cli(['diff', `${fx}/schema-before.json`, `${fx}/schema-after.json`])
  t.equal(text.code, EXIT.OK)
  t.match(text.out, /renamed\s+2 customer -> buyer/)
  t.notMatch(text.out, /dropped/, 'a rename is never a drop')
  const json = JSON.parse((await cli(['diff', `${fx}/schema-before.json`, `${fx}/schema-after.json`, '--format', 'json'])).out)
  t.same(json.changes.map((c: { kind: string }) => c.kind).sort(), ['field-added', 'field-renamed', 'type-changed'])
  t.equal(json['from-schema-id'], 0)
  t.equal(json['to-schema-id'], 1)
  const same = await cli(['diff', `${fx}/table-metadata.json`, `${fx}/schema-before.json`])
  t.equal(same.out, 'no changes\n', 'table metadata stands for its current schema')
  t.equal((await cli(['diff', `${fx}/schema-before.json`])).code, EXIT.USAGE)
})

t.test('policy validate: 0 valid, 1 invalid with line and column, 3 unreadable', async (t) => {
  const ok = await cli(['policy', 'validate', `${fx}/policy.yaml`])
  t.equal(ok.code, EXIT.OK)
  t.match(ok.out, /valid \(4 scopes/)
  const bad = await cli(['policy', 'validate', `${fx}/invalid-policy.yaml`])
  t.equal(bad.code, EXIT.DENY)
  t.match(bad.err, /invalid-policy\.yaml:2:7: mode/)
  t.match(bad.err, /did you mean COLUMN_NO_DROP/)
  t.equal((await cli(['policy', 'validate', `${fx}/nope.yaml`])).code, EXIT.USAGE)
  t.equal((await cli(['policy', 'check'])).code, EXIT.USAGE)
})

t.test('override: a token the gate verifies; no secret is a usage error', async (t) => {
  const secret = 'a-test-secret-of-enough-length'
  const r = await cli(['override', '--table', 'db.orders', '--rule', 'COLUMN_NO_DROP', '--ttl', '1h', '--reason', 'incident 42'], { ICEGUARD_OVERRIDE_SECRET: secret })
  t.equal(r.code, EXIT.OK)
  const verified = verifyOverride(r.out.trim(), { table: 'db.orders', secret })
  t.ok(verified.ok, 'verifies with the same secret')
  if (verified.ok) {
    t.same(verified.rules, ['COLUMN_NO_DROP'])
    t.equal(verified.expiresAt.getTime() - verified.issuedAt.getTime(), 3600_000)
  }
  const noSecret = await cli(['override', '--table', 'db.orders', '--rule', 'COLUMN_NO_DROP', '--ttl', '1h', '--reason', 'x'])
  t.equal(noSecret.code, EXIT.USAGE)
  t.match(noSecret.err, /ICEGUARD_OVERRIDE_SECRET/)
  const badTtl = await cli(['override', '--table', 'db.orders', '--rule', 'COLUMN_NO_DROP', '--ttl', 'soon', '--reason', 'x'], { ICEGUARD_OVERRIDE_SECRET: secret })
  t.equal(badTtl.code, EXIT.USAGE)
  t.match(badTtl.err, /Invalid ttl "soon"/)
})

t.test('help: top level and per command', async (t) => {
  const top = await cli(['--help'])
  t.equal(top.code, EXIT.OK)
  t.match(top.out, /Exit codes: 0 allow\/warn/)
  t.equal((await cli([])).code, EXIT.USAGE, 'no command is a usage error')
  const help = await cli(['check', '--help'])
  t.match(help.out, /--format\s+text \(default\), json/)
  t.match(help.out, /--url\s+instead of --metadata/)
  t.match((await cli(['diff', '--help'])).out, /iceguard diff --url <url> --table <ns\.table> <to\.json>/)
})

t.test('the bin runs as a process and exits with the verdict', async (t) => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...checkOrders('narrow-type', '--format', 'json')], { cwd: root, encoding: 'utf8' })
  t.equal(r.status, EXIT.DENY, r.stderr)
  t.equal(JSON.parse(r.stdout).verdict, 'deny')
})

t.test('serve is the server entry: --help prints its options', async (t) => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'serve', '--help'], { cwd: root, encoding: 'utf8' })
  t.equal(r.status, 0, r.stderr)
  t.match(r.stdout, /--upstream <value>/)
  t.match(r.stdout, /ICEGUARD_ADMIN_TOKEN/)
})

t.test('docs never fetch the unpublished name from the registry; the CI recipes parse and use real options', async (t) => {
  const docs = ['README.md', ...readdirSync(join(root, 'docs')).filter(f => f.endsWith('.md')).map(f => `docs/${f}`)]
  for (const doc of docs) {
    const text = readFileSync(join(root, doc), 'utf8')
    for (const m of text.matchAll(/\bnpx\s+(?:--\S+\s+)*iceguard\b/g)) {
      t.match(m[0], /--no-install/, `${doc}: "${m[0]}" runs the installed copy, never a registry download`)
    }
    t.notMatch(text, /\bnpm\s+(?:install|i|add)\s+(?:-g\s+|--global\s+|--save-dev\s+|-D\s+)*iceguard(?:@|\s|$)/m, `${doc}: no install of "iceguard" by registry name`)
  }
  const ci = readFileSync(join(root, 'docs/ci.md'), 'utf8')
  const blocks = [...ci.matchAll(/```yaml\n([\s\S]*?)```/g)].map(m => m[1] as string)
  t.ok(blocks.length >= 2, 'a GitHub Actions workflow and a GitLab CI job')
  const known = new Set(CHECK_USAGE.match(/--[a-z-]+/g))
  for (const block of blocks) {
    t.doesNotThrow(() => parseYaml(block), 'the YAML parses')
    const commands = [...block.replace(/\\\n\s*/g, ' ').matchAll(/iceguard check ([^\n|]*)/g)].map(m => m[1] as string)
    t.ok(commands.length > 0, 'the recipe runs iceguard check')
    for (const c of commands) for (const flag of c.match(/--[a-z-]+/g) ?? []) t.ok(known.has(flag), `check knows ${flag}`)
  }
  t.match(blocks[0], /--format github/)
  t.match(blocks[1], /--format gitlab/)
  t.match(blocks[1], /codequality: gl-code-quality-report\.json/)
})
