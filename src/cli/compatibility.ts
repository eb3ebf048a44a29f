/**
 * `iceguard compatibility`: "is this schema compatible with the table?" with just the schema
 * (`POST /admin/v1/namespaces/{ns}/tables/{t}/compatibility` on a running iceguard), for CI jobs
 * that keep a table's schema in a file. Field ids are optional in the file.
 */
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { isObject } from '../iceberg/json-values.js'
import { tableName } from '../iceberg/rest-path.js'
import type { CliIo } from './cli-io.js'
import { adminCallOf, postAdmin, reportError, tableUrl } from './evolve.js'
import { parseTableName } from './read-input.js'
import { EXIT, UsageError, type ExitCode } from './exit-codes.js'
import { answerFindingLine, overrideLine } from './report-formats.js'

export const COMPATIBILITY_USAGE = `Usage: iceguard compatibility --url <iceguard-url> --table <ns.table> schema.json [options]

  Judges schema.json (an Iceberg schema; field ids optional: fields without one are matched by
  name, as union-by-name does; fields left out are dropped) as the table's next schema, under the
  table's effective policy, and prints the verdict, every finding and the commit that would
  install it. Nothing is committed.

  Options:
    --prefix p             the catalog {prefix}, when the upstream uses one
    --token t              bearer token for the catalog (default: ICEGUARD_TOKEN); iceguard's admin token, if it needs one: ICEGUARD_ADMIN_TOKEN
    --override-token t     a break-glass token, judged as the gate judges it
    --format text|json

Exit: 0 compatible (allow or warn), 1 not compatible, 3 usage, input or server error.`

export async function runCompatibility (args: string[], io: CliIo): Promise<ExitCode> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      url: { type: 'string' },
      table: { type: 'string' },
      prefix: { type: 'string' },
      token: { type: 'string' },
      'override-token': { type: 'string' },
      format: { type: 'string', default: 'text' }
    },
    strict: true,
    allowPositionals: true
  })
  if (values.url === undefined) throw new UsageError('--url is required: the address of a running iceguard, e.g. --url http://localhost:8181')
  const table = parseTableName(values.table)
  if (values.format !== 'text' && values.format !== 'json') throw new UsageError(`Invalid --format "${values.format}": use text or json`)
  if (positionals.length !== 1) throw new UsageError(`Name one schema file\n${COMPATIBILITY_USAGE}`)
  const file = positionals[0] as string
  let schema: unknown
  try {
    schema = JSON.parse(readFileSync(resolve(io.cwd, file), 'utf8'))
  } catch (err) {
    throw new UsageError(`Cannot read schema ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
  }
  const call = adminCallOf(values.url, values, io.env)
  const url = tableUrl(call.url, table, 'compatibility', { prefix: values.prefix })
  const { status, json } = await postAdmin(call, url, { schema })
  if (status !== 200) return reportError(io, status, json)
  if (values.format === 'json') {
    io.stdout(JSON.stringify(json, null, 2) + '\n')
  } else {
    io.stdout(`${tableName(table)}: ${json.compatible === true ? 'compatible' : 'not compatible'} (verdict ${String(json.verdict)}, schema ${String(json['schema-id'])})\n`)
    if (typeof json.summary === 'string' && json.summary !== '') io.stdout(json.summary.split('\n').map(l => `  ${l}`).join('\n') + '\n')
    for (const f of (json.findings ?? []) as Array<{ rule: string, severity: string, path?: string, message: string, doc: string, overridden?: boolean }>) {
      io.stdout(`  ${answerFindingLine(f)}\n`)
    }
    for (const w of (json.warnings ?? []) as string[]) io.stdout(`  note: ${w}\n`)
    if (isObject(json.override)) io.stdout(`  ${overrideLine(json.override as Parameters<typeof overrideLine>[0])}\n`)
    if (json.request !== undefined) io.stdout(`  request: ${JSON.stringify(json.request)}\n`)
  }
  return json.compatible === true ? EXIT.OK : EXIT.DENY
}
