/**
 * `iceguard plan`: the changes that bring a table into conformance with a contract, from a running
 * iceguard (`POST …/schema-changes/plan`), and with `--apply` the commit of them through the gate.
 */
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import type { CliIo } from './cli-io.js'
import { adminCallOf, postAdmin, reportError, reportOutcome, tableUrl } from './evolve.js'
import { parseTableName } from './read-input.js'
import { EXIT, UsageError, type ExitCode } from './exit-codes.js'
import { tableName } from '../iceberg/rest-path.js'

export const PLAN_USAGE = `Usage: iceguard plan --url <iceguard-url> --table <ns.table> [--contract file.yaml] [--apply] [options]

  Plans the changes that make the table meet the contract: missing columns added, promotable types
  promoted, docs set, and in strict mode unlisted columns dropped. What no safe change can do is
  listed as unresolved. Without --contract, the contract the policy assigns to the table is used.

  Options:
    --apply            commit the plan through the gate
    --prefix p         the catalog {prefix}, when the upstream uses one
    --token t          bearer token for the catalog (default: ICEGUARD_TOKEN); iceguard's admin token, if it needs one: ICEGUARD_ADMIN_TOKEN
    --override-token t a break-glass token (iceguard override), sent as X-Iceguard-Override
    --format text|json

Exit: 0 planned or applied, 1 refused by the gate, 2 conflict, 3 usage, input or server error.`

export async function runPlan (args: string[], io: CliIo): Promise<ExitCode> {
  const { values } = parseArgs({
    args,
    options: {
      url: { type: 'string' },
      table: { type: 'string' },
      contract: { type: 'string' },
      apply: { type: 'boolean' },
      prefix: { type: 'string' },
      token: { type: 'string' },
      'override-token': { type: 'string' },
      format: { type: 'string', default: 'text' }
    },
    strict: true,
    allowPositionals: false
  })
  if (values.url === undefined) throw new UsageError('--url is required: the address of a running iceguard, e.g. --url http://localhost:8181')
  const table = parseTableName(values.table)
  if (values.format !== 'text' && values.format !== 'json') throw new UsageError(`Invalid --format "${values.format}": use text or json`)
  let contract: string | undefined
  if (values.contract !== undefined) {
    try {
      contract = readFileSync(resolve(io.cwd, values.contract), 'utf8')
    } catch (err) {
      throw new UsageError(`Cannot read contract ${values.contract}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
    }
  }
  const call = adminCallOf(values.url, values, io.env)
  const url = tableUrl(call.url, table, 'schema-changes/plan', { apply: values.apply === true ? 'true' : undefined, prefix: values.prefix })
  const { status, json } = await postAdmin(call, url, contract === undefined ? {} : { contract })
  if (status !== 200) return reportError(io, status, json)
  if (values.format === 'json') {
    io.stdout(JSON.stringify(json, null, 2) + '\n')
    return EXIT.OK
  }
  const label = tableName(table)
  const changes = (json.changes ?? []) as unknown[]
  const unresolved = (json.unresolved ?? []) as Array<{ message: string }>
  io.stdout(changes.length === 0 ? `${label}: the table meets the contract as far as a safe change can take it\n` : `${label}: ${changes.length} change(s):\n`)
  for (const c of changes) io.stdout(`  ${JSON.stringify(c)}\n`)
  for (const u of unresolved) io.stdout(`  unresolved: ${u.message}\n`)
  if (changes.length > 0) reportOutcome(io, label, json)
  return EXIT.OK
}
