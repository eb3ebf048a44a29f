/**
 * `iceguard check`: the gate's judgement, offline. Same engine, same policy resolution and same
 * wire answer as `POST /admin/v1/validate` with `metadata`, so a CI job and the live gate agree.
 */
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { evaluateCommit, evaluateCreate } from '../engine/evaluate-commit.js'
import { checkOverrideToken, evaluateUnder, overrideToWire, overrideVerifier } from '../gate/override.js'
import { ruleDoc } from '../engine/rules/index.js'
import { loadPolicy } from '../policy/load-policy.js'
import { PolicyError } from '../policy/policy-error.js'
import { resolvePolicy } from '../policy/resolve-policy.js'
import { evaluationToWire, type ValidateResponse } from '../schemas/validate.js'
import type { CliIo } from './cli-io.js'
import { EXIT, exitForVerdict, UsageError, type ExitCode } from './exit-codes.js'
import { loadLiveTable } from './live-table.js'
import { parseTableName, readJsonFile, readMetadataFile } from './read-input.js'
import { FORMATS, isReportFormat, renderReport } from './report-formats.js'
import { requestLines } from './request-lines.js'
import { tableName, type TableRef } from '../iceberg/rest-path.js'
import type { DependentView } from '../iceberg/view-reads.js'
import { dependentsFromWire, loadDependents } from './dependents.js'

export const CHECK_USAGE = `Usage: iceguard check --request commit.json (--metadata table.json | --url <url>) [--table ns.name]
                      [--policy policy.yaml] [--format ${FORMATS.join('|')}]

  --request    a CommitTableRequest (the updateTable body) or a CreateTableRequest
  --metadata   the table's current metadata (a metadata file or a loadTable answer)
  --url        instead of --metadata: load the table now from iceguard or the catalog
               (http://host:port[/base-path]; its /v1/config prefix is honoured)
  --token      bearer token for --url (default: ICEGUARD_TOKEN)
  --warehouse  warehouse for --url's /v1/config, when the catalog needs one
  --table      the table (policy scopes depend on it); required unless the request has an
               identifier, and must match it when both are given
  --policy     policy file or builtin:spec|builtin:recommended (default builtin:recommended)
  --override-token
               a break-glass token (iceguard override): verified with ICEGUARD_OVERRIDE_SECRET
               exactly as the gate verifies it; its rules' errors become warnings on its table,
               and a token that does not verify is refused (exit 1) with the gate's message
  --dependents the views that read the table: a running iceguard's URL (its
               GET /admin/v1/namespaces/{ns}/tables/{t}/dependents is asked, with --token), or
               that answer saved to a file. Views the change would break are listed, and
               judged by VIEW_REFERENCES_COLUMN
  --format     text (default), json (as POST /admin/v1/validate), junit, github (workflow
               commands), gitlab (Code Quality report)

  A CommitTableRequest needs --metadata or --url; a CreateTableRequest is judged on its own.

Exit: 0 allow or warn, 1 deny, 2 conflict, 3 usage or input error.`

function identifierOf (request: Record<string, unknown>): TableRef | undefined {
  const id = request.identifier
  if (typeof id !== 'object' || id === null) return undefined
  const { namespace, name } = id as { namespace?: unknown, name?: unknown }
  if (!Array.isArray(namespace) || !namespace.every(p => typeof p === 'string') || typeof name !== 'string') return undefined
  return { namespace: namespace as string[], name }
}

/**
 * The table the request is for. Policy scopes are namespace- and table-wide, so judging a change
 * against a guessed table would skip them: without --table or an identifier, check refuses.
 */
function tableOf (request: Record<string, unknown>, isCreate: boolean, flag: string | undefined, file: string): TableRef {
  const identifier = identifierOf(request)
  if (flag === undefined) {
    if (identifier !== undefined) return identifier
    throw new UsageError(`Cannot check ${file}: the table is unknown; name it with --table namespace.table (policy scopes depend on it)`)
  }
  const table = parseTableName(flag)
  if (identifier !== undefined && tableName(identifier) !== tableName(table)) {
    throw new UsageError(`Cannot check ${file}: --table ${tableName(table)} does not match the request's identifier ${tableName(identifier)}`)
  }
  if (isCreate && request.name !== table.name) {
    throw new UsageError(`Cannot check ${file}: --table ${tableName(table)} does not match the table the request creates, ${String(request.name)}`)
  }
  return table
}

export async function runCheck (args: string[], io: CliIo): Promise<ExitCode> {
  const { values } = parseArgs({
    args,
    options: {
      request: { type: 'string' },
      metadata: { type: 'string' },
      url: { type: 'string' },
      token: { type: 'string' },
      warehouse: { type: 'string' },
      table: { type: 'string' },
      policy: { type: 'string' },
      'override-token': { type: 'string' },
      dependents: { type: 'string' },
      format: { type: 'string', default: 'text' }
    },
    strict: true,
    allowPositionals: false
  })
  const format = values.format ?? 'text'
  if (!isReportFormat(format)) throw new UsageError(`Invalid --format "${format}": use one of ${FORMATS.join(', ')}`)
  if (values.request === undefined) throw new UsageError('check needs --request <commit.json>')
  if (values.metadata !== undefined && values.url !== undefined) throw new UsageError('check takes --metadata or --url, not both')

  const request = readJsonFile(io.cwd, values.request, 'request')
  if (Array.isArray(request['table-changes'])) {
    throw new UsageError(`Cannot check ${values.request}: it is a CommitTransactionRequest; check each table change with its own metadata, or use POST /admin/v1/validate`)
  }
  const isCreate = typeof request.name === 'string' && request.schema !== undefined && request.updates === undefined
  const table = tableOf(request, isCreate, values.table, values.request)

  let policy
  try {
    // A file is read relative to the directory the command runs in; builtin:… names a preset.
    policy = loadPolicy(values.policy === undefined || values.policy.startsWith('builtin:') ? values.policy : resolve(io.cwd, values.policy))
  } catch (err) {
    if (err instanceof PolicyError) throw new UsageError(err.message)
    throw err
  }
  const settings = resolvePolicy(policy, table)
  const read = checkOverrideToken(values['override-token'], overrideVerifier(io.env.ICEGUARD_OVERRIDE_SECRET), [table])
  if ('refusal' in read) {
    // The gate would refuse this commit with exactly this answer (400): the change may not go ahead.
    io.stderr(`iceguard: BadRequestException: ${read.refusal}\n`)
    return EXIT.DENY
  }

  let evaluation
  let dependents: DependentView[] | undefined
  if (isCreate) {
    evaluation = evaluateUnder(settings, read.grant, table, s => evaluateCreate({ request, settings: s }))
  } else {
    let base
    if (values.url !== undefined) {
      base = await loadLiveTable({ url: values.url, token: values.token ?? io.env.ICEGUARD_TOKEN, warehouse: values.warehouse }, table)
    } else if (values.metadata !== undefined) {
      base = readMetadataFile(io.cwd, values.metadata)
    } else {
      throw new UsageError('check needs the table\'s current metadata for a CommitTableRequest: --metadata <table.json>, or --url <iceguard or catalog> to load it')
    }
    const from = values.dependents
    dependents = from === undefined
      ? undefined
      : /^https?:\/\//i.test(from)
        ? await loadDependents({ url: from, token: values.token ?? io.env.ICEGUARD_TOKEN }, table)
        : dependentsFromWire(readJsonFile(io.cwd, from, 'dependents'), from)
    const views = dependents
    evaluation = evaluateUnder(settings, read.grant, table, s => evaluateCommit({ base, request, settings: s, target: 'table', ...(views !== undefined && { dependents: views }) }))
  }
  const wire = evaluationToWire({ ...evaluation, ...(dependents !== undefined && { dependents }) })
  // Rule pages are served by iceguard: under its public URL, or the --url the table came from.
  const docsBase = (io.env.ICEGUARD_PUBLIC_URL ?? values.url ?? '').replace(/\/+$/, '')
  const response: ValidateResponse = {
    table: { namespace: [...table.namespace], name: table.name },
    ...wire,
    findings: wire.findings.map(f => ({ ...f, doc: ruleDoc(f.rule, docsBase) })),
    ...(evaluation.override !== undefined && { override: overrideToWire(evaluation.override) })
  }
  const lines = format === 'github' || format === 'gitlab' ? requestLines(readFileSync(resolve(io.cwd, values.request), 'utf8')) : undefined
  io.stdout(renderReport(response, format, { requestFile: values.request, lines }))
  return exitForVerdict(response.verdict)
}
