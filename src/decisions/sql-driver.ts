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

/** A statement of a batch, with its parameters. */
export interface BatchStatement {
  readonly sql: string
  readonly params?: readonly unknown[]
}

export interface SqlDriver extends SqlExecutor {
  readonly dialect: Dialect
  /** Where the data lives, without credentials (for logs). */
  readonly location: string
  transaction<T> (fn: (tx: SqlExecutor) => Promise<T>): Promise<T>
  /**
   * Runs `statements` in order in one transaction, all or none, where no statement needs
   * another's answer: SQLite's thread gets them in one message, not one message per statement and
   * another for the commit. An empty batch runs nothing.
   */
  batch (statements: readonly BatchStatement[]): Promise<void>
  close (): Promise<void>
}

/** `batch` as one `run` after another in `transaction`, for a driver with nothing cheaper. */
export async function batchInTransaction (driver: Pick<SqlDriver, 'transaction'>, statements: readonly BatchStatement[]): Promise<void> {
  if (statements.length === 0) return
  await driver.transaction(async (tx) => {
    for (const s of statements) await tx.run(s.sql, s.params)
  })
}

/** `?` → `$n`, for PostgreSQL. The statements of this module hold no `?` inside literals. */
export function numberPlaceholders (sql: string): string {
  let n = 0
  return sql.replace(/\?/g, () => `$${++n}`)
}
