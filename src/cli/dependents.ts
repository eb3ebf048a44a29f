/**
 * The views that read a table, for `iceguard check --dependents`: asked of a running iceguard
 * (`GET /admin/v1/namespaces/{ns}/tables/{t}/dependents`), or read from that answer saved to a file.
 */
import { request } from 'undici'
import { isObject } from '../iceberg/json-values.js'
import { namespaceSegment, type TableRef } from '../iceberg/rest-path.js'
import type { DependentView, ReadColumn } from '../iceberg/view-reads.js'
import { UsageError } from './exit-codes.js'

export function dependentsFromWire (json: unknown, file: string): DependentView[] {
  const views = isObject(json) ? json.views : undefined
  if (!Array.isArray(views)) throw new UsageError(`Cannot read ${file}: expected an answer of GET /admin/v1/namespaces/{ns}/tables/{t}/dependents ({"views": [...]})`)
  return views.filter(isObject).map((v, i) => {
    const id = v.identifier
    if (!isObject(id) || !Array.isArray(id.namespace) || typeof id.name !== 'string') throw new UsageError(`Cannot read ${file}: views[${i}].identifier must be {"namespace": [...], "name": "..."}`)
    const columns: ReadColumn[] = (Array.isArray(v.columns) ? v.columns : []).filter(isObject).map(c => ({
      name: String(c.name),
      ...(typeof c['field-id'] === 'number' && { fieldId: c['field-id'], pathIds: [c['field-id']] })
    }))
    return {
      namespace: id.namespace.map(String),
      name: id.name,
      dialects: Array.isArray(v.dialects) ? v.dialects.map(String) : [],
      columns,
      star: v.star === true,
      parsed: v.parsed !== false
    }
  })
}

export async function loadDependents (source: { readonly url: string, readonly token?: string }, table: TableRef): Promise<DependentView[]> {
  const base = source.url.replace(/\/+$/, '')
  const headers: Record<string, string> = { accept: 'application/json' }
  if (source.token !== undefined && source.token !== '') headers.authorization = `Bearer ${source.token}`
  const query = table.prefix === undefined ? '' : `?prefix=${encodeURIComponent(table.prefix)}`
  try {
    const res = await request(`${base}/admin/v1/namespaces/${encodeURIComponent(namespaceSegment(table.namespace))}/tables/${encodeURIComponent(table.name)}/dependents${query}`, { headers })
    const text = await res.body.text()
    if (res.statusCode !== 200) throw new UsageError(`Cannot read the views that read the table from ${base}: GET …/dependents answered ${res.statusCode}`)
    return dependentsFromWire(JSON.parse(text), `${base}/admin/v1/…/dependents`)
  } catch (err) {
    if (err instanceof UsageError) throw err
    throw new UsageError(`Cannot read the views that read the table from ${base}: ${(err as { code?: string }).code ?? (err as Error).message}`)
  }
}
