/** `iceguard diff a.json b.json`, or `iceguard diff --url … --table ns.t b.json`: the changes between two schemas by field id. */
import { parseArgs } from 'node:util'
import { diffSchemas } from '../engine/diff/schema-diff.js'
import { summarizeChanges } from '../engine/diff/summary.js'
import type { Schema } from '../iceberg/types.js'
import { changeToWire } from '../schemas/change.js'
import type { DiffResponse } from '../schemas/diff.js'
import type { CliIo } from './cli-io.js'
import { EXIT, UsageError, type ExitCode } from './exit-codes.js'
import { loadLiveTable } from './live-table.js'
import { currentSchema, parseTableName, readSchemaFile } from './read-input.js'
import { tableName } from '../iceberg/rest-path.js'

export const DIFF_USAGE = `Usage: iceguard diff <from.json> <to.json> [--format text|json]
       iceguard diff --url <url> --table <ns.table> <to.json> [--token t] [--format text|json]

  Each file is a schema, table metadata (its current schema) or a loadTable answer. With --url the
  "from" schema is the table's current one, loaded now from iceguard or the catalog
  (http://host:port[/base-path]; its /v1/config prefix is honoured; --token or ICEGUARD_TOKEN for
  Authorization, --warehouse for catalogs that need one).
  Fields are paired by id: a rename is a rename, never a drop and an add.

Exit: 0 (whether or not anything changed), 3 usage or input error.`

export async function runDiff (args: string[], io: CliIo): Promise<ExitCode> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      format: { type: 'string', default: 'text' },
      url: { type: 'string' },
      table: { type: 'string' },
      token: { type: 'string' },
      warehouse: { type: 'string' }
    },
    strict: true,
    allowPositionals: true
  })
  if (values.format !== 'text' && values.format !== 'json') throw new UsageError(`Invalid --format "${values.format}": use text or json`)
  let from: Schema
  let to: Schema
  if (values.url !== undefined) {
    if (values.table === undefined) throw new UsageError('diff --url needs --table <ns.table>: the table whose current schema is compared')
    if (positionals.length !== 1) throw new UsageError('diff --url needs one file: iceguard diff --url <url> --table <ns.table> <to.json>')
    const table = parseTableName(values.table)
    const metadata = await loadLiveTable({ url: values.url, token: values.token ?? io.env.ICEGUARD_TOKEN, warehouse: values.warehouse }, table)
    from = currentSchema(metadata, tableName(table))
    to = readSchemaFile(io.cwd, positionals[0] as string)
  } else {
    if (values.table !== undefined) throw new UsageError('diff --table is for --url: without it, diff compares two files')
    if (positionals.length !== 2) throw new UsageError('diff needs two files: iceguard diff <from.json> <to.json>, or --url <url> --table <ns.table> <to.json>')
    from = readSchemaFile(io.cwd, positionals[0] as string)
    to = readSchemaFile(io.cwd, positionals[1] as string)
  }
  const changes = diffSchemas(from, to)
  const summary = summarizeChanges(changes)
  if (values.format === 'json') {
    const out: DiffResponse = { changes: changes.map(changeToWire), summary }
    if (from.schemaId !== undefined) out['from-schema-id'] = from.schemaId
    if (to.schemaId !== undefined) out['to-schema-id'] = to.schemaId
    io.stdout(JSON.stringify(out, null, 2) + '\n')
  } else {
    io.stdout((changes.length === 0 ? 'no changes' : summary) + '\n')
  }
  return EXIT.OK
}
