/**
 * `npm run test:interop`: the suites that put iceguard between real Iceberg clients and the real
 * Iceberg REST catalog (test/interop/*.test.ts, interop/README.md). They start JVMs and Spark, so
 * they run one file at a time, apart from `npm test`; each prints
 * `<suite>: N passed, N failed, N skipped`, and the last line sums them.
 * Arguments name suites to run (`catalog-tests`, `spark`, …); none runs them all.
 */
import { spawn } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { basename, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { tapBuildIsStale } from './tap-plugins.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const dir = join(root, 'test', 'interop')

function run (args, capture) {
  return new Promise((resolve) => {
    const child = spawn('tap', args, { cwd: root, stdio: ['ignore', capture ? 'pipe' : 'inherit', 'inherit'] })
    let out = ''
    if (capture) {
      child.stdout.on('data', (b) => {
        process.stdout.write(b)
        out += b.toString()
      })
    }
    child.on('exit', (code, signal) => resolve({ code, signal, out }))
  })
}

/** tap's closing summary, `# { total: 12, pass: 10, fail: 1, skip: 1 }`. */
export function summary (out) {
  const lines = out.split('\n').filter(l => l.startsWith('# { total:'))
  const last = lines.at(-1) ?? ''
  const field = (name) => Number(new RegExp(`${name}: (\\d+)`).exec(last)?.[1] ?? 0)
  return { pass: field('pass'), fail: field('fail'), skip: field('skip') + field('todo') }
}

if (tapBuildIsStale(root)) {
  const built = await run(['build'], false)
  if (built.code !== 0) process.exit(built.code ?? 1)
}

const wanted = process.argv.slice(2)
const files = readdirSync(dir).filter(f => f.endsWith('.test.ts')).sort()
  .filter(f => wanted.length === 0 || wanted.includes(basename(f, '.test.ts')))
if (files.length === 0) {
  console.error(`no interop suite matches ${wanted.join(', ')}`)
  process.exit(1)
}

const lines = []
const total = { pass: 0, fail: 0, skip: 0 }
let failed = false
for (const file of files) {
  const suite = basename(file, '.test.ts')
  const started = Date.now()
  const result = await run(['--jobs', '1', '--disable-coverage', '--exclude=', join('test', 'interop', file)], true)
  const s = summary(result.out)
  // A suite that crashed before tap's summary counts as one failure, never as a pass.
  if (result.code !== 0 && s.fail === 0) s.fail = 1
  if (result.code !== 0) failed = true
  for (const k of Object.keys(total)) total[k] += s[k]
  lines.push(`${suite}: ${s.pass} passed, ${s.fail} failed, ${s.skip} skipped (${Math.round((Date.now() - started) / 1000)} s)`)
}
console.log('')
for (const line of lines) console.log(line)
console.log(`interop: ${total.pass} passed, ${total.fail} failed, ${total.skip} skipped`)
process.exit(failed ? 1 : 0)
