import type { PlatformRule } from './platform-rule.js'
import { addedFields, isPseudoField } from './support.js'

/** A column without a doc is a question every consumer has to ask someone; ask once, at write time. */
export const COLUMN_DOC_REQUIRED: PlatformRule = {
  id: 'COLUMN_DOC_REQUIRED',
  category: 'platform',
  purpose: 'Requires a doc on every new column (and on every column of a new table).',
  defaultSeverity: 'warn',
  * check (ctx) {
    for (const f of addedFields(ctx)) {
      if (isPseudoField(f) || (f.field?.doc ?? '').trim() !== '') continue
      yield {
        rule: this.id,
        message: `Cannot add column ${f.path} (id ${f.id}) without a doc: the policy requires every new column to be documented`,
        fieldId: f.id,
        path: f.path,
        explanation: 'Give the column a doc when adding it: Spark `ALTER TABLE … ADD COLUMN x type COMMENT \'…\'`, PyIceberg `add_column(…, doc=\'…\')`, Java `addColumn(name, type, doc)`.'
      }
    }
  }
}
