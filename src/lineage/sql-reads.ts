/**
 * What one SQL query reads, per base table: the columns it names and whether it selects `*`.
 *
 * The text is parsed by sqlparser-rs (Apache DataFusion's SQL parser, compiled to WebAssembly and
 * published as `@guanmingchiu/sqlparser-ts`; docs/view-index.md says why that parser). Its AST is
 * the serde form of the Rust enums (`{"Select": {...}}`, `{"CompoundIdentifier": [...]}`), walked
 * here with a scope per SELECT: the relations of its FROM (tables, subqueries, CTEs, UNNEST and
 * lateral views), the scopes around it for correlated references, and lambda parameters.
 *
 * The answer errs towards "reads": a column that cannot be pinned to one of several tables is
 * counted against each table that may have it, since a missed reader is the failure that matters.
 */
import { init, parse } from '@guanmingchiu/sqlparser-ts'

type Json = unknown
type Obj = Readonly<Record<string, Json>>

/** What a query reads of one table, before field ids are known. */
export interface RawTableRead {
  /** Name parts as written (`sales.orders` → ['sales', 'orders']), unquoted. */
  readonly table: readonly string[]
  /** Column paths, each as written (`address.city` → ['address', 'city']). */
  readonly columns: ReadonlyArray<readonly string[]>
  readonly star: boolean
}

/** Column names a table is known to have, for pinning unqualified names in a join. */
export type ColumnsOf = (table: readonly string[]) => ReadonlySet<string> | undefined

let ready: Promise<void> | undefined

/** Loads the parser (WebAssembly) once; every analysis waits for it. */
export async function loadSqlParser (): Promise<void> {
  ready ??= init()
  await ready
}

/** sqlparser-rs dialects tried for an Iceberg view dialect, in order; the generic one reads the rest (Trino among them). */
function parserDialects (dialect: string): Array<'spark' | 'databricks' | 'hive' | 'generic'> {
  switch (dialect.toLowerCase()) {
    case 'spark': return ['spark', 'databricks', 'generic']
    case 'hive': return ['hive', 'generic']
    default: return ['generic', 'spark']
  }
}

/**
 * Reads a query. Returns undefined when no dialect parses it or it is not a single query (the
 * caller then keeps it as unparsed). `loadSqlParser` must have finished.
 */
export function sqlReads (sql: string, dialect: string, columnsOf?: ColumnsOf): RawTableRead[] | undefined {
  for (const d of parserDialects(dialect)) {
    let statements: Json[]
    try {
      statements = parse(sql, d) as Json[]
    } catch {
      continue
    }
    if (statements.length !== 1) return undefined
    const query = child(statements[0], 'Query')
    if (query === undefined) return undefined
    const collector = new Collector(columnsOf)
    collector.query(query, undefined)
    return collector.result()
  }
  return undefined
}

interface Source {
  /** Lower-cased name the query refers to it by (alias, or the table's last name part). */
  readonly alias: string
  /** A base table: its name parts. Absent for subqueries, CTEs, UNNEST and lateral views. */
  readonly table?: readonly string[]
  /** Lower-cased output columns when known (a derived table's projection, an UNNEST alias list). */
  readonly outputs?: ReadonlySet<string>
}

interface Scope {
  readonly parent?: Scope
  readonly sources: Source[]
  readonly ctes: Map<string, ReadonlySet<string> | undefined>
  /** Lambda parameters and other names bound inside an expression. */
  readonly locals: ReadonlySet<string>
}

class Collector {
  private readonly reads = new Map<string, { table: string[], columns: Map<string, string[]>, star: boolean }>()

  constructor (private readonly columnsOf?: ColumnsOf) {}

  result (): RawTableRead[] {
    return [...this.reads.values()].map(r => ({ table: r.table, columns: [...r.columns.values()], star: r.star }))
  }

  private entry (table: readonly string[]): { table: string[], columns: Map<string, string[]>, star: boolean } {
    const key = table.map(p => p.toLowerCase()).join('\u0000')
    let e = this.reads.get(key)
    if (e === undefined) {
      e = { table: [...table], columns: new Map(), star: false }
      this.reads.set(key, e)
    }
    return e
  }

  private readColumn (table: readonly string[], path: readonly string[]): void {
    this.entry(table).columns.set(path.map(p => p.toLowerCase()).join('.'), [...path])
  }

  /** A Query: its CTEs (each sees the ones before it), its body, and its ORDER BY / LIMIT in the body's scope. */
  query (q: Json, parent: Scope | undefined): ReadonlySet<string> | undefined {
    const ctes = new Map(parent?.ctes ?? [])
    const withScope: Scope = { parent, sources: [], ctes, locals: new Set() }
    for (const cte of arrayOf(child(child(q, 'with'), 'cte_tables'))) {
      const name = identName(child(child(cte, 'alias'), 'name'))
      const outputs = this.query(child(cte, 'query'), withScope)
      const listed = aliasColumns(child(cte, 'alias'))
      if (name !== undefined) ctes.set(name.toLowerCase(), listed ?? outputs)
    }
    const { outputs, scope } = this.setExpr(child(q, 'body'), withScope)
    for (const [key, value] of entries(q)) {
      if (key === 'with' || key === 'body') continue
      this.expr(value, scope ?? withScope)
    }
    return outputs
  }

  private setExpr (node: Json, parent: Scope): { outputs?: ReadonlySet<string>, scope?: Scope } {
    const select = child(node, 'Select')
    if (select !== undefined) return this.select(select, parent)
    const nested = child(node, 'Query')
    if (nested !== undefined) return { outputs: this.query(nested, parent) }
    const op = child(node, 'SetOperation')
    if (op !== undefined) {
      const left = this.setExpr(child(op, 'left'), parent)
      this.setExpr(child(op, 'right'), parent)
      return left
    }
    this.expr(node, parent)
    return {}
  }

  private select (sel: Json, parent: Scope): { outputs?: ReadonlySet<string>, scope: Scope } {
    const scope: Scope = { parent, sources: [], ctes: parent.ctes, locals: new Set() }
    for (const twj of arrayOf(child(sel, 'from'))) this.tableWithJoins(twj, scope)
    for (const lv of arrayOf(child(sel, 'lateral_views'))) {
      this.expr(child(lv, 'lateral_view'), scope)
      const name = objectName(child(lv, 'lateral_view_name'))
      const cols = new Set(arrayOf(child(lv, 'lateral_col_alias')).map(identName).filter(isString).map(s => s.toLowerCase()))
      scope.sources.push({ alias: (name?.at(-1) ?? '').toLowerCase(), outputs: cols })
    }
    const outputs = new Set<string>()
    let known = true
    for (const item of arrayOf(child(sel, 'projection'))) {
      if (child(item, 'Wildcard') !== undefined) {
        known = false
        for (const s of scope.sources) if (s.table !== undefined) this.entry(s.table).star = true
        continue
      }
      const qualified = child(item, 'QualifiedWildcard')
      if (qualified !== undefined) {
        known = false
        const parts = objectName(child(arrayOf(qualified)[0], 'ObjectName')) ?? []
        const source = findSource(scope, parts)
        if (source?.table !== undefined) this.entry(source.table).star = true
        continue
      }
      const aliased = child(item, 'ExprWithAlias')
      if (aliased !== undefined) {
        this.expr(child(aliased, 'expr'), scope)
        const alias = identName(child(aliased, 'alias'))
        if (alias !== undefined) outputs.add(alias.toLowerCase())
        continue
      }
      const plain = child(item, 'UnnamedExpr')
      this.expr(plain, scope)
      const parts = columnParts(plain)
      if (parts !== undefined) outputs.add((parts.at(-1) as string).toLowerCase())
    }
    for (const [key, value] of entries(sel)) {
      if (key === 'from' || key === 'lateral_views' || key === 'projection') continue
      this.expr(value, scope)
    }
    return { ...(known && { outputs }), scope }
  }

  private tableWithJoins (twj: Json, scope: Scope): void {
    this.factor(child(twj, 'relation'), scope)
    for (const join of arrayOf(child(twj, 'joins'))) {
      this.factor(child(join, 'relation'), scope)
      this.joinConstraint(child(join, 'join_operator'), scope)
    }
  }

  /** ON expressions are read in the join's scope; USING (c) reads c of each side. */
  private joinConstraint (op: Json, scope: Scope): void {
    for (const [, constraint] of entries(op)) {
      const on = child(constraint, 'On')
      if (on !== undefined) this.expr(on, scope)
      for (const name of arrayOf(child(constraint, 'Using'))) {
        const parts = objectName(name)
        if (parts !== undefined) this.reference(parts, scope)
      }
    }
  }

  private factor (node: Json, scope: Scope): void {
    const table = child(node, 'Table')
    if (table !== undefined) {
      const parts = objectName(child(table, 'name')) ?? []
      const alias = identName(child(child(table, 'alias'), 'name'))
      const args = child(table, 'args')
      if (args !== undefined && args !== null) {
        // A table function (UNNEST(...) AS t(x) in the generic dialect): its arguments are reads, its alias a local relation.
        this.expr(args, scope)
        scope.sources.push({ alias: (alias ?? parts.at(-1) ?? '').toLowerCase(), outputs: aliasColumns(child(table, 'alias')) ?? new Set() })
        return
      }
      const cte = parts.length === 1 ? scope.ctes.get((parts[0] as string).toLowerCase()) : undefined
      if (parts.length === 1 && scope.ctes.has((parts[0] as string).toLowerCase())) {
        scope.sources.push({ alias: (alias ?? parts[0] as string).toLowerCase(), ...(cte !== undefined && { outputs: cte }) })
        return
      }
      this.entry(parts)
      scope.sources.push({ alias: (alias ?? parts.at(-1) ?? '').toLowerCase(), table: parts })
      return
    }
    const derived = child(node, 'Derived')
    if (derived !== undefined) {
      // Only a LATERAL subquery sees the relations before it; any subquery sees the enclosing query's.
      const lateral = child(derived, 'lateral') === true
      const outputs = this.query(child(derived, 'subquery'), lateral ? scope : (scope.parent ?? scope))
      const alias = identName(child(child(derived, 'alias'), 'name'))
      const listed = aliasColumns(child(derived, 'alias'))
      scope.sources.push({ alias: (alias ?? '').toLowerCase(), ...((listed ?? outputs) !== undefined && { outputs: listed ?? outputs }) })
      return
    }
    const unnest = child(node, 'UNNEST')
    if (unnest !== undefined) {
      this.expr(child(unnest, 'array_exprs'), scope)
      const alias = identName(child(child(unnest, 'alias'), 'name'))
      scope.sources.push({ alias: (alias ?? '').toLowerCase(), outputs: aliasColumns(child(unnest, 'alias')) ?? new Set() })
      return
    }
    const nested = child(node, 'NestedJoin')
    if (nested !== undefined) {
      this.tableWithJoins(child(nested, 'table_with_joins'), scope)
      return
    }
    // Any other relation (a table function, PIVOT …): read what it names, bind its alias.
    for (const [, value] of entries(node)) {
      this.expr(value, scope)
      const alias = identName(child(child(value, 'alias'), 'name'))
      if (alias !== undefined) scope.sources.push({ alias: alias.toLowerCase(), outputs: aliasColumns(child(value, 'alias')) ?? new Set() })
    }
  }

  /** Walks an expression (any JSON) for column references, subqueries and lambdas. */
  expr (node: Json, scope: Scope): void {
    if (Array.isArray(node)) {
      for (const item of node) this.expr(item, scope)
      return
    }
    if (!isObj(node)) return
    for (const [key, value] of Object.entries(node)) {
      switch (key) {
        case 'Identifier': {
          const name = identName(value)
          if (name !== undefined) this.reference([name], scope)
          break
        }
        case 'CompoundIdentifier': {
          const parts = arrayOf(value).map(identName)
          if (parts.every(isString)) this.reference(parts, scope)
          break
        }
        case 'CompoundFieldAccess': {
          const root = columnParts(child(value, 'root'))
          const chain = arrayOf(child(value, 'access_chain')).map(a => identName(child(child(a, 'Dot'), 'Identifier')))
          const dots: string[] = []
          for (const c of chain) { if (c === undefined) break; dots.push(c) }
          if (root !== undefined) this.reference([...root, ...dots], scope)
          else this.expr(child(value, 'root'), scope)
          this.expr(child(value, 'access_chain'), scope)
          break
        }
        case 'Function':
          // The function's name is not a column; its arguments, FILTER and OVER are read.
          for (const [k, v] of entries(value)) if (k !== 'name') this.expr(v, scope)
          break
        case 'BinaryOp': {
          // The generic dialect reads Trino's `x -> x.sku` as an arrow operator: a lambda whose parameters are the left side's names.
          const params = child(value, 'op') === 'Arrow' ? arrowParams(child(value, 'left')) : undefined
          if (params !== undefined) this.expr(child(value, 'right'), { parent: scope, sources: [], ctes: scope.ctes, locals: params })
          else this.expr(value, scope)
          break
        }
        case 'Lambda': {
          const params = lambdaParams(child(value, 'params'))
          this.expr(child(value, 'body'), { parent: scope, sources: [], ctes: scope.ctes, locals: params })
          break
        }
        case 'Subquery':
        case 'subquery':
        case 'query':
          if (child(value, 'body') !== undefined) this.query(value, scope)
          else this.expr(value, scope)
          break
        case 'data_type':
        case 'alias':
        case 'span':
        case 'quote_style':
        case 'select_token':
        case 'wildcard_token':
        case 'optimizer_hints':
        case 'Named':
          if (key === 'Named') this.expr(child(value, 'arg'), scope)
          break
        default:
          this.expr(value, scope)
      }
    }
  }

  /**
   * A name in an expression. Qualified by a relation of this scope or an enclosing one
   * (`o.amount`, `sales.orders.amount`), it reads that relation's column, the rest being a struct
   * path. Unqualified, it reads the column of the innermost scope that may have it.
   */
  private reference (parts: readonly string[], scope: Scope): void {
    const first = (parts[0] as string).toLowerCase()
    if (parts.length >= 2) {
      // A qualifier names a relation of this scope or of an enclosing one (a correlated reference).
      for (let s: Scope | undefined = scope; s !== undefined; s = s.parent) {
        if (s.locals.has(first)) return
        for (let n = Math.min(parts.length - 1, 3); n >= 1; n--) {
          const source = findSource(s, parts.slice(0, n))
          if (source !== undefined) {
            if (source.table !== undefined) this.readColumn(source.table, parts.slice(n))
            return
          }
        }
      }
    }
    // Unqualified, or the qualifier is a struct column: the innermost scope with a relation that may have it.
    for (let s: Scope | undefined = scope; s !== undefined; s = s.parent) {
      if (s.locals.has(first)) return
      const derived = s.sources.filter(src => src.table === undefined && (src.outputs === undefined || src.outputs.has(first)))
      if (derived.some(src => src.outputs !== undefined)) return
      const tables = s.sources.filter(src => {
        if (src.table === undefined) return false
        const known = this.columnsOf?.(src.table)
        return known === undefined || known.has(first)
      })
      if (tables.length > 0) {
        for (const t of tables) this.readColumn(t.table as string[], parts)
        return
      }
      if (derived.length > 0) return
    }
    // No relation is known to have it: a column the table lacks (a view written after a rename) still
    // reads the innermost scope's tables, so that the view is judged against them.
    for (let s: Scope | undefined = scope; s !== undefined; s = s.parent) {
      const tables = s.sources.filter(src => src.table !== undefined)
      if (tables.length === 0) continue
      for (const t of tables) this.readColumn(t.table as string[], parts)
      return
    }
  }
}

/** The relation `parts` names in this scope: an alias, or a table by the tail of its name. */
function findSource (scope: Scope, parts: readonly string[]): Source | undefined {
  const lower = parts.map(p => p.toLowerCase())
  if (lower.length === 1) return scope.sources.find(s => s.alias === lower[0])
  return scope.sources.find(s => s.table !== undefined && s.alias === s.table.at(-1)?.toLowerCase() &&
    s.table.length >= lower.length && s.table.slice(-lower.length).every((p, i) => p.toLowerCase() === lower[i]))
}

function columnParts (node: Json): string[] | undefined {
  const ident = identName(child(node, 'Identifier'))
  if (ident !== undefined) return [ident]
  const compound = child(node, 'CompoundIdentifier')
  if (compound === undefined) return undefined
  const parts = arrayOf(compound).map(identName)
  return parts.every(isString) ? parts : undefined
}

function lambdaParams (params: Json): Set<string> {
  const names = new Set<string>()
  const visit = (n: Json): void => {
    if (Array.isArray(n)) { n.forEach(visit); return }
    if (!isObj(n)) return
    if (typeof n.value === 'string') names.add(n.value.toLowerCase())
    for (const v of Object.values(n)) if (typeof v === 'object') visit(v)
  }
  visit(params)
  return names
}

/** `x` or `(x, y)` on the left of an arrow: the lambda's parameters; undefined when it is anything else. */
function arrowParams (left: Json): Set<string> | undefined {
  const one = identName(child(left, 'Identifier'))
  if (one !== undefined) return new Set([one.toLowerCase()])
  const tuple = child(left, 'Tuple') ?? child(left, 'Nested')
  const items = Array.isArray(tuple) ? tuple : [tuple]
  const names = items.map(i => identName(child(i, 'Identifier')))
  return names.length > 0 && names.every(isString) ? new Set(names.map(n => n.toLowerCase())) : undefined
}

/** `AS t(a, b)`: the column names an alias gives, lower-cased; undefined when it lists none. */
function aliasColumns (alias: Json): Set<string> | undefined {
  const cols = arrayOf(child(alias, 'columns')).map(c => identName(child(c, 'name')) ?? identName(c)).filter(isString)
  return cols.length > 0 ? new Set(cols.map(c => c.toLowerCase())) : undefined
}

/** An ObjectName (`[{"Identifier": {...}}, …]`) as its unquoted parts. */
function objectName (node: Json): string[] | undefined {
  const parts = arrayOf(node).map(p => identName(child(p, 'Identifier')) ?? identName(p))
  return parts.length > 0 && parts.every(isString) ? parts : undefined
}

function identName (node: Json): string | undefined {
  return isObj(node) && typeof node.value === 'string' ? node.value : undefined
}

function child (node: Json, key: string): Json {
  return isObj(node) ? node[key] : undefined
}

function entries (node: Json): Array<[string, Json]> {
  return isObj(node) ? Object.entries(node) : []
}

function arrayOf (node: Json): Json[] {
  return Array.isArray(node) ? node : []
}

function isObj (node: Json): node is Obj {
  return typeof node === 'object' && node !== null && !Array.isArray(node)
}

function isString (x: unknown): x is string {
  return typeof x === 'string'
}
