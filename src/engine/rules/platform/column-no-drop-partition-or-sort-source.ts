import type { PlatformRule } from './platform-rule.js'
import { droppedFields } from './support.js'

/**
 * Java checks only the default partition spec and sort order when a column is dropped; older specs
 * are rebound unchecked, and tables whose retained specs source a dropped column fail to load or
 * read: apache/iceberg #4563, #5676 (NPE, corrupt v2 metadata), #10626, #16217 (unrecoverable,
 * even after DROP PARTITION FIELD). So every spec and sort order the table still keeps counts. A
 * `void` transform reads no source value, so it does not hold the column.
 */
export const COLUMN_NO_DROP_PARTITION_OR_SORT_SOURCE: PlatformRule = {
  id: 'COLUMN_NO_DROP_PARTITION_OR_SORT_SOURCE',
  category: 'platform',
  purpose: 'Refuses dropping a column that any retained partition spec or sort order uses as a source, not only the default one.',
  defaultSeverity: 'error',
  * check (ctx) {
    const dropped = droppedFields(ctx)
    if (dropped.length === 0) return
    const meta = ctx.proposed
    for (const f of dropped) {
      const users: string[] = []
      for (const spec of meta.partitionSpecs) {
        for (const pf of spec.fields) {
          if (pf.transform !== 'void' && pf.sourceIds.includes(f.id)) {
            users.push(`partition spec ${spec.specId}${spec.specId === meta.defaultSpecId ? ' (default)' : ''} field ${pf.name} (${pf.transform})`)
          }
        }
      }
      for (const order of meta.sortOrders) {
        for (const sf of order.fields) {
          if (sf.transform !== 'void' && sf.sourceIds.includes(f.id)) {
            users.push(`sort order ${order.orderId}${order.orderId === meta.defaultSortOrderId ? ' (default)' : ''} (${sf.transform} ${sf.direction})`)
          }
        }
      }
      if (users.length === 0) continue
      yield {
        rule: this.id,
        message: `Cannot drop column ${f.path} (id ${f.id}): it is the source of ${users.join(', ')}`,
        fieldId: f.id,
        path: f.path,
        explanation: 'Iceberg validates only the default spec and sort order on a drop; older specs that still reference the column break metadata loading and reads (apache/iceberg #4563, #5676, #10626, #16217). First stop partitioning/sorting by it (DROP PARTITION FIELD, a new sort order), expire the snapshots that use the old spec, remove the unused specs (remove-partition-specs) and sort orders, then drop the column.'
      }
    }
  }
}
