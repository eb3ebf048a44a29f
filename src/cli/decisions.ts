/** `iceguard decisions`: the gate's stored decisions from a running iceguard, newest first. */
import { parseArgs } from 'node:util'
import { request } from 'undici'
import { tableName } from '../iceberg/rest-path.js'
import type { CliIo } from './cli-io.js'
import { EXIT, UsageError, type ExitCode } from './exit-codes.js'
import { reportError } from './evolve.js'

export const DECISIONS_USAGE = `Usage: iceguard decisions --url <iceguard-url> [filters] [--limit 50] [--format text|json]

  Lists the gate's decisions, newest first (GET /admin/v1/decisions, following pages).
  Filters: --namespace ns  --table name  --verdict allow|warn|deny|conflict|refused|error
           --rule RULE_ID  --principal sub:alice  --since 2026-03-01T00:00:00Z  --until …
  --token t  bearer token for the admin API (default: ICEGUARD_ADMIN_TOKEN)

Exit: 0 listed, 3 usage or server error.`

const FILTERS = ['namespace', 'table', 'verdict', 'rule', 'principal', 'since', 'until'] as const

interface WireDecision {
  id: string
  time: string
  table: { namespace: string[], name: string }
  kind: string
  verdict: string
  principal: string | null
  findings: Array<{ rule: string, severity: string, message: string }>
  changes: string
  override: { id: string } | null
}

export async function runDecisions (args: string[], io: CliIo): Promise<ExitCode> {
  const { values } = parseArgs({
    args,
    options: {
      url: { type: 'string' },
      token: { type: 'string' },
      limit: { type: 'string' },
      format: { type: 'string' },
      ...Object.fromEntries(FILTERS.map(f => [f, { type: 'string' as const }]))
    },
    strict: true,
    allowPositionals: false
  })
  const base = values.url as string | undefined
  if (base === undefined || !/^https?:\/\//.test(base)) throw new UsageError('--url is required: the address of a running iceguard, e.g. --url http://localhost:8181')
  const limit = values.limit === undefined ? 50 : Number(values.limit)
  if (!Number.isInteger(limit) || limit < 1) throw new UsageError(`Invalid --limit "${String(values.limit)}": a whole number above 0`)
  const format = (values.format as string | undefined) ?? 'text'
  if (format !== 'text' && format !== 'json') throw new UsageError(`Invalid --format "${format}": text or json`)
  const token = (values.token as string | undefined) ?? io.env.ICEGUARD_ADMIN_TOKEN

  const found: WireDecision[] = []
  let pageToken: string | null = null
  do {
    const query = new URLSearchParams()
    const given = values as Record<string, unknown>
    for (const f of FILTERS) if (typeof given[f] === 'string') query.set(f, given[f] as string)
    query.set('page-size', String(Math.min(500, limit - found.length)))
    if (pageToken !== null) query.set('page-token', pageToken)
    const url = `${base.replace(/\/+$/, '')}/admin/v1/decisions?${query.toString()}`
    let res
    try {
      res = await request(url, { headers: token === undefined || token === '' ? {} : { authorization: `Bearer ${token}` } })
    } catch (err) {
      throw new UsageError(`Cannot reach iceguard at ${base}: ${(err as { code?: string }).code ?? (err as Error).message}`)
    }
    const text = await res.body.text()
    let json: Record<string, unknown>
    try {
      json = JSON.parse(text) as Record<string, unknown>
    } catch {
      throw new UsageError(`iceguard answered ${res.statusCode} with a body that is not JSON`)
    }
    if (res.statusCode !== 200) {
      reportError(io, res.statusCode, json)
      return EXIT.USAGE
    }
    found.push(...(json.decisions as WireDecision[]))
    pageToken = json['next-page-token'] as string | null
  } while (pageToken !== null && found.length < limit)

  if (format === 'json') {
    io.stdout(JSON.stringify({ decisions: found }, null, 2) + '\n')
    return EXIT.OK
  }
  if (found.length === 0) io.stdout('no decisions\n')
  for (const d of found) {
    const rules = [...new Set(d.findings.map(f => f.rule))].join(',')
    io.stdout([d.time, d.verdict.padEnd(8), tableName(d.table), d.kind, d.principal ?? '-', rules === '' ? '-' : rules,
      d.override === null ? '' : `override=${d.override.id}`, d.id].filter(s => s !== '').join('  ') + '\n')
    for (const f of d.findings) io.stdout(`    ${f.severity} ${f.rule}: ${f.message}\n`)
  }
  return EXIT.OK
}
