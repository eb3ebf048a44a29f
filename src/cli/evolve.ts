/**
 * `iceguard evolve`: schema changes by name, sent to a running iceguard
 * (`POST /admin/v1/namespaces/{ns}/tables/{t}/schema-changes`), which assigns the ids, builds the
 * commit and puts it through the gate. Changes apply in the order the flags are given.
 */
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { parseArgs, type ParseArgsConfig } from 'node:util'
import { request } from 'undici'
import { isObject } from '../iceberg/json-values.js'
import { OVERRIDE_HEADER } from '../gate/override.js'
import type { CliIo } from './cli-io.js'
import { answerFindingLine, overrideLine } from './report-formats.js'
import { EXIT, UsageError, type ExitCode } from './exit-codes.js'
import { parseTableName } from './read-input.js'
import { namespaceSegment, tableName, type TableRef } from '../iceberg/rest-path.js'
import { ADMIN_TOKEN_HEADER } from '../auth/bearer.js'

export const EVOLVE_USAGE = `Usage: iceguard evolve --url <iceguard-url> --table <ns.table> <change>... [options]

  Changes (repeatable; applied in the order given):
    --add-column name:type           --add-nested-column parent.name:type
    --rename-column path=new-name    --make-optional path
    --update-type path:type          --update-doc path=doc
    --move-first path                --delete-column path
    --ensure-column path:type        --ensure-rename from=to
    --changes file.json              a JSON list of changes (or {"changes": [...]}), for
                                     union-by-name, moves before/after and the rest
  Types: long, decimal(10, 2), list<string>, struct<a: int, b: string>, map<string, long>.

  Options:
    --doc text             doc for the --add-column/--ensure-column right before it
    --legacy-archival      let --ensure-column replace an incompatible column (old one kept as <name>__legacy_N)
    --dry-run              show the verdict and the exact commit; commit nothing
    --prefix p             the catalog {prefix}, when the upstream uses one
    --token t              bearer token for the catalog (default: ICEGUARD_TOKEN); iceguard's admin token, if it needs one: ICEGUARD_ADMIN_TOKEN
    --override-token t     a break-glass token (iceguard override), sent as X-Iceguard-Override:
                           its rules' errors become warnings on this table, in the dry run and the commit
    --format text|json

Exit: 0 committed or nothing to do, 1 refused (a change or the gate), 2 conflict, 3 usage, input or server error.`

interface AdminCall {
  readonly url: string
  /** The catalog's bearer token: commits go to the catalog as the caller. */
  readonly token?: string
  /** iceguard's admin token (`ICEGUARD_ADMIN_TOKEN`), sent as X-Iceguard-Admin-Token beside the catalog's. */
  readonly adminToken?: string
  /** A break-glass token, sent as X-Iceguard-Override. */
  readonly overrideToken?: string
}

/** The admin call a command's flags and environment describe (`--token`, `--override-token`). */
export function adminCallOf (url: string, flags: { readonly token?: unknown, readonly 'override-token'?: unknown }, env: NodeJS.ProcessEnv): AdminCall {
  const text = (v: unknown): string | undefined => typeof v === 'string' && v !== '' ? v : undefined
  const token = text(flags.token) ?? text(env.ICEGUARD_TOKEN)
  const adminToken = text(env.ICEGUARD_ADMIN_TOKEN)
  const overrideToken = text(flags['override-token'])
  return { url, ...(token !== undefined && { token }), ...(adminToken !== undefined && { adminToken }), ...(overrideToken !== undefined && { overrideToken }) }
}

/** The admin API URL of `table`'s `tail` endpoint, with the query parameters that are set. */
export function tableUrl (base: string, table: TableRef, tail: string, query: Record<string, string | undefined>): string {
  const q = Object.entries(query).filter(([, v]) => v !== undefined).map(([k, v]) => `${k}=${encodeURIComponent(v as string)}`).join('&')
  return `${base.replace(/\/+$/, '')}/admin/v1/namespaces/${encodeURIComponent(namespaceSegment(table.namespace))}/tables/${encodeURIComponent(table.name)}/${tail}${q === '' ? '' : `?${q}`}`
}

/** POSTs JSON to iceguard; answers the status and the parsed body. */
export async function postAdmin (call: AdminCall, url: string, body: unknown): Promise<{ status: number, json: Record<string, unknown> }> {
  if (!/^https?:\/\//.test(call.url)) throw new UsageError(`Invalid --url "${call.url}": expected http(s)://host:port of a running iceguard`)
  let res
  try {
    res = await request(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(call.token !== undefined && call.token !== '' && { authorization: `Bearer ${call.token}` }),
        ...(call.adminToken !== undefined && call.adminToken !== '' && { [ADMIN_TOKEN_HEADER]: call.adminToken }),
        ...(call.overrideToken !== undefined && call.overrideToken !== '' && { [OVERRIDE_HEADER]: call.overrideToken })
      },
      body: JSON.stringify(body)
    })
  } catch (err) {
    throw new UsageError(`Cannot reach iceguard at ${call.url}: ${(err as { code?: string }).code ?? (err as Error).message}`)
  }
  const text = await res.body.text()
  try {
    return { status: res.statusCode, json: JSON.parse(text) as Record<string, unknown> }
  } catch {
    throw new UsageError(`iceguard answered ${res.statusCode} with a body that is not JSON`)
  }
}

/** Exit code and text for an error answer (ErrorModel). */
export function reportError (io: CliIo, status: number, json: Record<string, unknown>): ExitCode {
  const error = (json.error ?? {}) as { message?: string, type?: string, stack?: string[] }
  io.stderr(`iceguard: ${error.type ?? 'Error'}: ${error.message ?? `HTTP ${status}`}\n`)
  for (const line of error.stack ?? []) io.stderr(`  ${line}\n`)
  if (status === 400) return EXIT.DENY
  if (status === 409) return EXIT.CONFLICT
  return EXIT.USAGE
}

/** The human summary of a schema-changes (or plan) answer. */
export function reportOutcome (io: CliIo, label: string, out: Record<string, unknown>): void {
  const findings = (out.findings ?? []) as Array<{ rule: string, severity: string, path?: string, message: string, overridden?: boolean }>
  const warnings = (out.warnings ?? []) as string[]
  if (out.noop === true) io.stdout(`${label}: nothing to do: the schema already is what was asked\n`)
  else if (out.committed === true) io.stdout(`${label}: committed schema ${String(out['schema-id'])} (last-column-id ${String(out['last-column-id'])}, verdict ${String(out.verdict)})\n`)
  else io.stdout(`${label}: dry run, verdict ${String(out.verdict)}: would commit schema ${String(out['schema-id'])} (last-column-id ${String(out['last-column-id'])})\n`)
  if (typeof out.summary === 'string' && out.noop !== true && out.summary !== '') io.stdout(out.summary.split('\n').map(l => `  ${l}`).join('\n') + '\n')
  for (const f of findings) io.stdout(`  ${answerFindingLine(f)}\n`)
  for (const w of warnings) io.stdout(`  note: ${w}\n`)
  if (isObject(out.override)) io.stdout(`  ${overrideLine(out.override as Parameters<typeof overrideLine>[0])}\n`)
  if (out.committed !== true && out.noop !== true && out.request !== undefined) io.stdout(`  request: ${JSON.stringify(out.request)}\n`)
}

function nameAndType (flag: string, value: string): [string, string] {
  const i = value.indexOf(':')
  if (i <= 0 || i === value.length - 1) throw new UsageError(`Invalid --${flag} "${value}": expected name:type, e.g. note:string`)
  return [value.slice(0, i).trim(), value.slice(i + 1).trim()]
}

function pair (flag: string, value: string, example: string): [string, string] {
  const i = value.indexOf('=')
  if (i <= 0) throw new UsageError(`Invalid --${flag} "${value}": expected ${example}`)
  return [value.slice(0, i).trim(), value.slice(i + 1)]
}

function readChangesFile (cwd: string, file: string): unknown[] {
  let json: unknown
  try {
    json = JSON.parse(readFileSync(resolve(cwd, file), 'utf8'))
  } catch (err) {
    throw new UsageError(`Cannot read changes ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
  }
  const list = Array.isArray(json) ? json : (json as { changes?: unknown }).changes
  if (!Array.isArray(list)) throw new UsageError(`Cannot read changes ${file}: expected a JSON list of changes or {"changes": [...]}`)
  return list
}

const CHANGE_FLAGS = ['add-column', 'add-nested-column', 'rename-column', 'make-optional', 'update-type', 'update-doc', 'move-first', 'delete-column', 'ensure-column', 'ensure-rename', 'changes']

export async function runEvolve (args: string[], io: CliIo): Promise<ExitCode> {
  const options: NonNullable<ParseArgsConfig['options']> = {
    url: { type: 'string' },
    table: { type: 'string' },
    prefix: { type: 'string' },
    token: { type: 'string' },
    'override-token': { type: 'string' },
    format: { type: 'string', default: 'text' },
    'dry-run': { type: 'boolean' },
    doc: { type: 'string', multiple: true },
    'legacy-archival': { type: 'boolean' },
    ...Object.fromEntries(CHANGE_FLAGS.map(f => [f, { type: 'string' as const, multiple: true }]))
  }
  const { values, tokens } = parseArgs({ args, options, strict: true, allowPositionals: false, tokens: true })
  const v = values as Record<string, unknown>
  if (typeof v.url !== 'string') throw new UsageError('--url is required: the address of a running iceguard, e.g. --url http://localhost:8181')
  const table = parseTableName(v.table as string | undefined)
  if (v.format !== 'text' && v.format !== 'json') throw new UsageError(`Invalid --format "${String(v.format)}": use text or json`)

  // Flags in the order given: the changes apply in that order, and --doc belongs to the change before it.
  const changes: Array<Record<string, unknown>> = []
  for (const token of tokens ?? []) {
    if (token.kind !== 'option' || token.value === undefined) continue
    const value = token.value
    switch (token.name) {
      case 'add-column': { const [name, type] = nameAndType(token.name, value); changes.push({ op: 'add-column', name, type }); break }
      case 'add-nested-column': {
        const [path, type] = nameAndType(token.name, value)
        const dot = path.lastIndexOf('.')
        if (dot <= 0) throw new UsageError(`Invalid --add-nested-column "${value}": expected parent.name:type`)
        changes.push({ op: 'add-nested-column', parent: path.slice(0, dot), name: path.slice(dot + 1), type })
        break
      }
      case 'rename-column': { const [path, newName] = pair(token.name, value, 'path=new-name'); changes.push({ op: 'rename-column', path, 'new-name': newName }); break }
      case 'make-optional': changes.push({ op: 'make-column-optional', path: value }); break
      case 'update-type': { const [path, type] = nameAndType(token.name, value); changes.push({ op: 'update-column-type', path, type }); break }
      case 'update-doc': { const [path, doc] = pair(token.name, value, 'path=doc'); changes.push({ op: 'update-doc', path, doc }); break }
      case 'move-first': changes.push({ op: 'move-column', path: value, first: true }); break
      case 'delete-column': changes.push({ op: 'delete-column', path: value }); break
      case 'ensure-column': {
        const [path, type] = nameAndType(token.name, value)
        changes.push({ op: 'ensure-column', path, type, ...(v['legacy-archival'] === true && { 'legacy-archival': true }) })
        break
      }
      case 'ensure-rename': { const [from, to] = pair(token.name, value, 'from=to'); changes.push({ op: 'ensure-rename', from, to }); break }
      case 'changes': changes.push(...readChangesFile(io.cwd, value) as Array<Record<string, unknown>>); break
      case 'doc': {
        const last = changes.at(-1)
        if (last === undefined || (last.op !== 'add-column' && last.op !== 'add-nested-column' && last.op !== 'ensure-column')) {
          throw new UsageError('--doc belongs right after an --add-column, --add-nested-column or --ensure-column')
        }
        last.doc = value
        break
      }
    }
  }
  if (changes.length === 0) throw new UsageError(`Name at least one change\n${EVOLVE_USAGE}`)

  const call = adminCallOf(v.url, v, io.env)
  const url = tableUrl(call.url, table, 'schema-changes', { 'dry-run': v['dry-run'] === true ? 'true' : undefined, prefix: v.prefix as string | undefined })
  const { status, json } = await postAdmin(call, url, { changes })
  if (status !== 200) return reportError(io, status, json)
  if (v.format === 'json') io.stdout(JSON.stringify(json, null, 2) + '\n')
  else reportOutcome(io, tableName(table), json)
  return EXIT.OK
}
