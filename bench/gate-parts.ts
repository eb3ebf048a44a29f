/**
 * The gate's own CPU per schema commit, part by part, in-process (no HTTP): reading the base the
 * upstream sent, reading the commit body, evaluating it, adding the requirements, and the whole
 * gate over a fake upstream. The base is the benchmark's `evolving` table as a `snapshots=refs`
 * load returns it (50 columns, 20 schemas of history, ~80 KB) and the commit the `schema-commit`
 * workload's body (~5 KB). A base is read in two ways: cold (the table's first read) and after a
 * commit changed its ETag (the same table with one schema more: 20 of its 21 schema texts were
 * read before, `src/gate/schema-texts.ts`).
 *
 *   node --import tsx bench/gate-parts.ts
 *
 * Figures are CPU time (process.cpuUsage), the best of several rounds, so other load on a shared
 * machine disturbs them less than wall time; compare rows of one run with each other. The
 * `JSON.parse` and `lossless-json` rows are references: the whole answer through the native parser
 * (a first read parses less: fields that repeat the schema before are parsed once), and the reader
 * and writer the gate used before.
 */
import { LosslessNumber, parse, stringify } from 'lossless-json'
import { evaluateCommit } from '../src/engine/evaluate-commit.js'
import { missingRequirements } from '../src/gate/inject-requirements.js'
import { createGateService } from '../src/gate/gate-service.js'
import { readLoadAnswer } from '../src/gate/load-base.js'
import { parseCommitBody } from '../src/json/parse-commit-body.js'
import { createSchemaTexts } from '../src/gate/schema-texts.js'
import { spliceRequirements } from '../src/json/splice-requirements.js'
import type { TableMetadata } from '../src/iceberg/types.js'
import { loadPolicy } from '../src/policy/load-policy.js'
import { resolvePolicy } from '../src/policy/resolve-policy.js'
import type { UpstreamRequest, UpstreamResponse } from '../src/upstream/undici/client.js'
import { afterSchemaCommit, commitTableResponse, loadTableResult, schemaCommit, type TableOptions } from './lib/fixtures.js'
import { isObject } from '../src/iceberg/json-values.js'

const EVOLVING: TableOptions = { table: 'evolving', columns: 50, snapshots: 3, schemas: 20, refsOnly: true }
const ROUNDS = 9

/** Best CPU µs per call of `f` over ROUNDS rounds of `n` calls. */
function cpuMicros (n: number, f: () => void): number {
  for (let i = 0; i < n; i++) f()
  let best = Infinity
  for (let r = 0; r < ROUNDS; r++) {
    const start = process.cpuUsage()
    for (let i = 0; i < n; i++) f()
    const used = process.cpuUsage(start)
    best = Math.min(best, (used.user + used.system) / n)
  }
  return best
}

/** Best CPU µs per call of the async `f`, called `n` times one after another, over ROUNDS rounds. */
async function cpuMicrosAsync (n: number, f: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < n; i++) await f()
  let best = Infinity
  for (let r = 0; r < ROUNDS; r++) {
    const start = process.cpuUsage()
    for (let i = 0; i < n; i++) await f()
    const used = process.cpuUsage(start)
    best = Math.min(best, (used.user + used.system) / n)
  }
  return best
}

function readBase (bytes: Buffer, reuse?: Parameters<typeof readLoadAnswer>[1]): TableMetadata {
  const load = readLoadAnswer({ statusCode: 200, headers: {}, body: bytes }, reuse)
  if (load.metadata === undefined) throw new Error(`the benchmark base does not read: ${load.problem ?? ''}`)
  return load.metadata
}

function readBody (bytes: Buffer): Record<string, unknown> {
  const read = parseCommitBody(bytes)
  if (!read.ok || !isObject(read.value)) throw new Error('the benchmark commit does not read')
  return read.value
}

const baseBytes = Buffer.from(loadTableResult(EVOLVING))
const baseText = baseBytes.toString('utf8')
const commitBytes = Buffer.from(schemaCommit(EVOLVING, 'add-optional-column'))
const commitText = commitBytes.toString('utf8')
// The settings iceguard applies with no policy file (builtin:recommended): spec and platform rules.
const settings = resolvePolicy(loadPolicy(undefined), { namespace: ['bench'], name: 'evolving' })
const cachedBase = readBase(baseBytes)
const body = readBody(commitBytes)
const evaluation = evaluateCommit({ base: cachedBase, request: body, settings, target: 'table' })
const missing = missingRequirements(body, cachedBase, evaluation)
if (evaluation.verdict === 'deny' || missing.length === 0) throw new Error('the benchmark commit should be allowed and get a requirement added')

// The same table after the workload's commit: one schema more, the 20 before it unchanged.
const afterBytes = Buffer.from(loadTableResult(afterSchemaCommit(EVOLVING)))
const texts = createSchemaTexts()
const reuse = { texts, key: 'bench.evolving' }
readBase(baseBytes, reuse)
const knownBefore = texts.get(reuse.key)
if (knownBefore === undefined || knownBefore.texts.length !== 20) throw new Error('the base\'s schema texts were not kept')

// The whole gate over a fake upstream that revalidates the base (304) and answers the commit.
const ETAG = '"bench"'
const answerBytes = Buffer.from(commitTableResponse(afterSchemaCommit(EVOLVING)))
const gate = createGateService({
  client: {
    async request (req: UpstreamRequest): Promise<UpstreamResponse> {
      if (req.method !== 'GET') return { statusCode: 200, headers: { 'content-type': 'application/json' }, body: answerBytes }
      const conditional = !Array.isArray(req.headers) && (req.headers as Record<string, unknown> | undefined)?.['if-none-match'] === ETAG
      return conditional ? { statusCode: 304, headers: { etag: ETAG }, body: Buffer.alloc(0) } : { statusCode: 200, headers: { etag: ETAG }, body: baseBytes }
    }
  },
  settingsFor: () => settings,
  audit: { record () {} },
  config: { assertions: 'inject', retryAfter: 1 }
})
const gateRequest = {
  kind: 'update-table' as const,
  ident: { namespace: ['bench'], table: 'evolving' },
  method: 'POST',
  path: '/v1/namespaces/bench/tables/evolving',
  rawBody: commitBytes,
  headers: { 'content-type': 'application/json', authorization: 'Bearer bench' },
  forwardHeaders: ['content-type', 'application/json', 'authorization', 'Bearer bench'],
  requestId: 'bench'
}
const first = await gate.handle(gateRequest)
if (first.type !== 'upstream' || !first.forwarded) throw new Error('the benchmark commit should be forwarded by the gate')

const rows: Array<[string, number]> = [
  ['base: bytes → TableMetadata, cold (first read)', cpuMicros(200, () => readBase(baseBytes, { texts: createSchemaTexts(), key: 'cold' }))],
  ['base: after a commit changed the ETag', cpuMicros(200, () => {
    texts.set(reuse.key, knownBefore)
    readBase(afterBytes, reuse)
  })],
  ['  reference: the same, no texts kept from before', cpuMicros(200, () => readBase(afterBytes))],
  ['  reference: JSON.parse of the cold bytes', cpuMicros(200, () => JSON.parse(baseText))],
  ['base read, commit read, evaluate (cache miss)', cpuMicros(100, () => {
    evaluateCommit({ base: readBase(baseBytes), request: readBody(commitBytes), settings, target: 'table' })
  })],
  ['commit body: parseCommitBody', cpuMicros(2000, () => readBody(commitBytes))],
  ['  reference: lossless-json parse', cpuMicros(2000, () => parse(commitText, null, (s: string) => new LosslessNumber(s)))],
  ['commit read, evaluate (base from ETag cache)', cpuMicros(1000, () => {
    evaluateCommit({ base: cachedBase, request: readBody(commitBytes), settings, target: 'table' })
  })],
  ['requirements: spliced into the bytes', cpuMicros(2000, () => spliceRequirements(commitBytes, [{ at: [], requirements: missing }]))],
  ['  reference: lossless-json stringify', cpuMicros(2000, () => stringify(body))],
  ['gate: whole commit, base revalidated (304)', await cpuMicrosAsync(500, async () => await gate.handle(gateRequest))]
]

process.stdout.write(`gate parts: base ${Math.round(baseBytes.length / 1024)} KB (${EVOLVING.columns} columns, ${EVOLVING.schemas ?? 1} schemas), commit ${Math.round(commitBytes.length / 1024)} KB; CPU µs per call, best of ${ROUNDS} rounds\n`)
for (const [what, us] of rows) process.stdout.write(`${what.padEnd(46)} ${us.toFixed(1).padStart(8)}\n`)
