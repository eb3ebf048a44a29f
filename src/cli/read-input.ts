/**
 * Reading the CLI's input files. JSON is read losslessly (64-bit snapshot ids keep every digit),
 * with the gate's own limits on depth, duplicate keys and prototype keys.
 */
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { parseCommitBody } from '../json/parse-commit-body.js'
import { toPlainJson } from '../schemas/plain-json.js'
import { parseSchema, parseTableMetadata } from '../iceberg/parse.js'
import type { Schema, TableMetadata } from '../iceberg/types.js'
import { UsageError } from './exit-codes.js'
import { isObject } from '../iceberg/json-values.js'
import type { TableRef } from '../iceberg/rest-path.js'

export function readJsonFile (cwd: string, file: string, what: string): Record<string, unknown> {
  let raw: Buffer
  try {
    raw = readFileSync(resolve(cwd, file))
  } catch (err) {
    throw new UsageError(`Cannot read ${what} ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
  }
  const parsed = parseCommitBody(raw)
  if (!parsed.ok) throw new UsageError(`Cannot read ${what} ${file}: ${parsed.message.replace(/^Cannot read request body: /, '')}`)
  const value = toPlainJson(parsed.value)
  if (!isObject(value)) throw new UsageError(`Cannot read ${what} ${file}: expected a JSON object`)
  return value
}

function firstIssue (issues: readonly { at: string, message: string }[]): string {
  const first = issues[0]
  if (first === undefined) return 'unreadable'
  return `${first.at === '' ? '' : `${first.at}: `}${first.message}${issues.length > 1 ? ` (and ${issues.length - 1} more)` : ''}`
}

/** Table metadata from a metadata document or a loadTable answer (`{"metadata": …}`); `source` names it in errors. */
export function metadataFromJson (json: Record<string, unknown>, source: string): TableMetadata {
  const body = isObject(json.metadata) ? json.metadata : json
  const { metadata, issues } = parseTableMetadata(body)
  if (metadata === undefined) throw new UsageError(`Cannot read table metadata ${source}: ${firstIssue(issues)}`)
  return metadata
}

/** Table metadata from a metadata file, or from a loadTable answer (`{"metadata": …}`). */
export function readMetadataFile (cwd: string, file: string): TableMetadata {
  return metadataFromJson(readJsonFile(cwd, file, 'table metadata'), file)
}

/** The current schema of table metadata; `source` names it in errors. */
export function currentSchema (metadata: TableMetadata, source: string): Schema {
  const current = metadata.schemas.find(s => s.schemaId === metadata.currentSchemaId)
  if (current === undefined) throw new UsageError(`Cannot read schema ${source}: the metadata has no current schema ${metadata.currentSchemaId}`)
  return current
}

/** A schema from a schema file, or the current schema of a metadata file or loadTable answer. */
export function readSchemaFile (cwd: string, file: string): Schema {
  const json = readJsonFile(cwd, file, 'schema')
  if (json.type === 'struct') {
    const { schema, issues } = parseSchema(json)
    if (schema === undefined) throw new UsageError(`Cannot read schema ${file}: ${firstIssue(issues)}`)
    return schema
  }
  const body = isObject(json.metadata) ? json.metadata : json
  const { metadata, issues } = parseTableMetadata(body)
  if (metadata === undefined) throw new UsageError(`Cannot read schema ${file}: it is neither a schema nor table metadata (${firstIssue(issues)})`)
  return currentSchema(metadata, file)
}

/** `--table db.orders` or `a.b.orders` → namespace and name (the last dot separates the table). */
export function parseTableName (text: string | undefined): TableRef {
  if (text === undefined) throw new UsageError('--table is required, e.g. --table db.orders')
  const parts = text.split('.')
  const name = parts.pop()
  if (name === undefined || name === '' || parts.length === 0 || parts.some(p => p === '')) {
    throw new UsageError(`Invalid --table "${text}": use namespace.table, e.g. db.orders`)
  }
  return { namespace: parts, name }
}
