/**
 * The few SQL calls the decision store makes, over either database. Statements are written once
 * with `?` placeholders in the subset both dialects share (TEXT, BIGINT, INTEGER, plain indexes);
 * the PostgreSQL driver numbers the placeholders (`$1`, `$2`, …) itself.
 */

export type Dialect = 'sqlite' | 'postgres'

export type Row = Record<string, unknown>

/** Runs statements; inside `transaction` the same calls run on the transaction's connection. */
export interface SqlExecutor {
  query (sql: string, params?: readonly unknown[]): Promise<Row[]>
  /** Returns the number of rows changed. */
  run (sql: string, params?: readonly unknown[]): Promise<number>
}

export interface SqlDriver extends SqlExecutor {
  readonly dialect: Dialect
  /** Where the data lives, without credentials (for logs). */
  readonly location: string
  transaction<T> (fn: (tx: SqlExecutor) => Promise<T>): Promise<T>
  close (): Promise<void>
}

/** `?` → `$n`, for PostgreSQL. The statements of this module hold no `?` inside literals. */
export function numberPlaceholders (sql: string): string {
  let n = 0
  return sql.replace(/\?/g, () => `$${++n}`)
}
