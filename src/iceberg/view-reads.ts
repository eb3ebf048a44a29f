/**
 * What a view reads of one base table, as the view index records it: the shape shared by the SQL
 * analysis (src/lineage), the decision store, the rules and the admin API. Data only.
 */

/** One column a view names, by its path as written and, once resolved, by field id. */
export interface ReadColumn {
  /** Dotted path as the table's schema spells it (`amount`, `address.city`). */
  readonly name: string
  /** Id of the deepest field of the path found in the table's schema at index time. */
  readonly fieldId?: number
  /** Ids of every field along the path, outermost first: renaming any of them breaks the view. */
  readonly pathIds?: readonly number[]
}

/** What one view reads of one table. */
export interface TableRead {
  /** The table as the SQL names it, resolved against the view's default catalog and namespace. */
  readonly table: readonly string[]
  readonly columns: readonly ReadColumn[]
  /** `SELECT *` or `t.*`: every column is read, so any drop or rename changes the view's output. */
  readonly star: boolean
}

/** One SQL representation of a view's current version, read. */
export interface ViewReads {
  readonly dialects: readonly string[]
  /** false: no representation parsed; the view is taken to read every column of every table it names. */
  readonly parsed: boolean
  readonly tables: readonly TableRead[]
}

/** A view of the catalog that reads a given table, as the rules and the dependents answer see it. */
export interface DependentView {
  readonly namespace: readonly string[]
  readonly name: string
  readonly dialects: readonly string[]
  readonly columns: readonly ReadColumn[]
  readonly star: boolean
  readonly parsed: boolean
}

/** Columns a view version names that a table's current schema does not have. */
export interface MissingRead {
  /** Dotted table name. */
  readonly table: string
  readonly columns: readonly string[]
}
