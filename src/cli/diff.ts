/** `iceguard diff a.json b.json`: the changes between two schemas by field id. */
import { parseArgs } from 'node:util'
import { diffSchemas } from '../diff/schema-diff.js'
import { summarizeChanges } from '../diff/summary.js'
import { changeToWire } from '../schemas/change.js'
import type { DiffResponse } from '../schemas/diff.js'
import type { CliIo } from './cli-io.js'
import { EXIT, UsageError, type ExitCode } from './exit-codes.js'
import { readSchemaFile } from './read-input.js'

export const DIFF_USAGE = `Usage: iceguard diff <from.json> <to.json> [--format text|json]

  Each file is a schema, table metadata (its current schema) or a loadTable answer.
  Fields are paired by id: a rename is a rename, never a drop and an add.

Exit: 0 (whether or not anything changed), 3 usage or input error.`

export function runDiff (args: string[], io: CliIo): ExitCode {
  const { values, positionals } = parseArgs({
    args,
    options: { format: { type: 'string', default: 'text' } },
    strict: true,
    allowPositionals: true
  })
  if (positionals.length !== 2) throw new UsageError('diff needs two files: iceguard diff <from.json> <to.json>')
  if (values.format !== 'text' && values.format !== 'json') throw new UsageError(`Invalid --format "${values.format}": use text or json`)
  const from = readSchemaFile(io.cwd, positionals[0] as string)
  const to = readSchemaFile(io.cwd, positionals[1] as string)
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
