/**
 * After `registerTable` the gate sees a table whose history it never judged: the metadata file
 * lives in storage the gate does not read. Once the upstream has registered it, each schema is
 * judged as the evolution from the schema before it, with the spec's rules only (the platform's
 * policy governs future commits, not a past it could not stop). Findings are reported, never
 * enforced: the table already exists.
 */
import { isServed, markServed } from '../iceberg/history-store.js'
import { indexSchema } from '../iceberg/schema-index.js'
import { schemaToJson } from '../iceberg/print.js'
import type { Schema, TableMetadata } from '../iceberg/types.js'
import type { Finding } from './rules/rule.js'
import { SPEC_ONLY_SETTINGS } from './rules/settings.js'
import { evaluateCommit } from './evaluate-commit.js'

/** Spec findings of every step of the table's schema history, each message prefixed with the step. */
export function checkSchemaHistory (metadata: TableMetadata): Finding[] {
  const schemas = metadata.schemas
  const findings: Finding[] = []
  let lastColumnId = 0
  for (let i = 0; i < schemas.length; i++) {
    const schema = schemas[i] as Schema
    if (i > 0) {
      const before = schemas.slice(0, i)
      const previous = before[i - 1] as Schema
      const base = stepBase(metadata, before, previous, lastColumnId)
      const evaluation = evaluateCommit({
        base,
        request: { requirements: [], updates: [{ action: 'add-schema', schema: schemaToJson(schema) }, { action: 'set-current-schema', 'schema-id': -1 }] },
        settings: SPEC_ONLY_SETTINGS,
        target: 'table'
      })
      const step = `schema ${previous.schemaId ?? i - 1} -> ${schema.schemaId ?? i}`
      for (const f of evaluation.findings) findings.push({ ...f, message: `${step}: ${f.message}` })
    }
    lastColumnId = Math.max(lastColumnId, indexSchema(schema).highestId)
  }
  return findings
}

/**
 * The table as it stood when `previous` was current: earlier schemas only, and only the partition
 * specs and sort orders whose sources existed then (later ones would read as dangling references).
 */
function stepBase (metadata: TableMetadata, before: readonly Schema[], previous: Schema, lastColumnId: number): TableMetadata {
  const ids = new Set(indexSchema(previous).byId.keys())
  const specs = metadata.partitionSpecs.filter(s => s.fields.every(f => f.sourceIds.every(id => ids.has(id))))
  const orders = metadata.sortOrders.filter(o => o.fields.every(f => f.sourceIds.every(id => ids.has(id))))
  const defaultSpec = specs.find(s => s.specId === metadata.defaultSpecId) ?? specs[0]
  const defaultOrder = orders.find(o => o.orderId === metadata.defaultSortOrderId) ?? orders[0]
  const step: TableMetadata = {
    ...metadata,
    schemas: before,
    currentSchemaId: previous.schemaId ?? 0,
    lastColumnId,
    partitionSpecs: defaultSpec === undefined ? [{ specId: 0, fields: [] }] : specs,
    defaultSpecId: defaultSpec?.specId ?? 0,
    sortOrders: defaultOrder === undefined ? [{ orderId: 0, fields: [] }] : orders,
    defaultSortOrderId: defaultOrder?.orderId ?? 0
  }
  // A prefix of served metadata is served metadata: each step extends the table's history summary.
  if (isServed(metadata)) markServed(step)
  return step
}
