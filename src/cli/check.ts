/**
 * `iceguard check`: the gate's judgement, offline. Same engine, same policy resolution and same
 * wire answer as `POST /admin/v1/validate` with `metadata`, so a CI job and the live gate agree.
 */
import { parseArgs } from 'node:util'
import { evaluateCommit, evaluateCreate } from '../gate/evaluate-commit.js'
import { loadPolicy } from '../policy/load-policy.js'
import { PolicyError } from '../policy/policy-error.js'
import { resolvePolicy } from '../policy/resolve-policy.js'
import { evaluationToWire, type ValidateResponse } from '../schemas/validate.js'
import type { CliIo } from './cli-io.js'
import { EXIT, exitForVerdict, UsageError, type ExitCode } from './exit-codes.js'
import { parseTableName, readJsonFile, readMetadataFile } from './read-input.js'
import { FORMATS, isReportFormat, renderReport } from './report-formats.js'

export const CHECK_USAGE = `Usage: iceguard check --request commit.json [--metadata table.json] [--table ns.name]
                      [--policy policy.yaml] [--format ${FORMATS.join('|')}]

  --request    a CommitTableRequest (the updateTable body) or a CreateTableRequest
  --metadata   the table's current metadata (a metadata file or a loadTable answer);
               required for a CommitTableRequest, not used for a CreateTableRequest
  --table      the table, for policy scopes (default: the request's identifier)
  --policy     policy file or builtin:spec|builtin:recommended (default builtin:recommended)
  --format     text (default), json (as POST /admin/v1/validate), junit, github

Exit: 0 allow or warn, 1 deny, 2 conflict, 3 usage or input error.`

function identifierOf (request: Record<string, unknown>): { namespace: string[], name: string } | undefined {
  const id = request.identifier
  if (typeof id !== 'object' || id === null) return undefined
  const { namespace, name } = id as { namespace?: unknown, name?: unknown }
  if (!Array.isArray(namespace) || !namespace.every(p => typeof p === 'string') || typeof name !== 'string') return undefined
  return { namespace: namespace as string[], name }
}

export function runCheck (args: string[], io: CliIo): ExitCode {
  const { values } = parseArgs({
    args,
    options: {
      request: { type: 'string' },
      metadata: { type: 'string' },
      table: { type: 'string' },
      policy: { type: 'string' },
      format: { type: 'string', default: 'text' }
    },
    strict: true,
    allowPositionals: false
  })
  const format = values.format ?? 'text'
  if (!isReportFormat(format)) throw new UsageError(`Invalid --format "${format}": use one of ${FORMATS.join(', ')}`)
  if (values.request === undefined) throw new UsageError('check needs --request <commit.json>')

  const request = readJsonFile(io.cwd, values.request, 'request')
  if (Array.isArray(request['table-changes'])) {
    throw new UsageError(`Cannot check ${values.request}: it is a CommitTransactionRequest; check each table change with its own metadata, or use POST /admin/v1/validate`)
  }
  const isCreate = typeof request.name === 'string' && request.schema !== undefined && request.updates === undefined
  const table = values.table !== undefined
    ? parseTableName(values.table)
    : identifierOf(request) ?? (isCreate ? { namespace: ['default'], name: request.name as string } : { namespace: ['default'], name: 'table' })

  let policy
  try {
    policy = loadPolicy(values.policy)
  } catch (err) {
    if (err instanceof PolicyError) throw new UsageError(err.message)
    throw err
  }
  const settings = resolvePolicy(policy, table)

  let evaluation
  if (isCreate) {
    evaluation = evaluateCreate({ request, settings })
  } else {
    if (values.metadata === undefined) throw new UsageError('check needs --metadata <table.json> for a CommitTableRequest (the table\'s current metadata)')
    const base = readMetadataFile(io.cwd, values.metadata)
    evaluation = evaluateCommit({ base, request, settings, target: 'table' })
  }
  const response: ValidateResponse = { table, ...evaluationToWire(evaluation) }
  io.stdout(renderReport(response, format, { requestFile: values.request }))
  return exitForVerdict(response.verdict)
}

export { EXIT }
