/**
 * The tables a SQL text seems to name when no parser reads it: every dotted name after FROM or
 * JOIN. An unparsed view is taken to read every column of each, so finding too many tables is the
 * safe side; string literals and comments are blanked first so that they cannot name one.
 */
const NAME_PART = '(?:`(?:[^`]|``)+`|"(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_$]*)'
const AFTER = new RegExp(`\\b(?:FROM|JOIN)\\s+(${NAME_PART}(?:\\s*\\.\\s*${NAME_PART})*)`, 'gi')
const PART = new RegExp(NAME_PART, 'g')
/** Words that follow FROM or JOIN without naming a table. */
const NOT_TABLES = new Set(['select', 'with', 'unnest', 'lateral', 'values', 'table'])

export function unparsedTables (sql: string): string[][] {
  const text = sql
    .replace(/--[^\n]*/g, ' ')
    .replace(/\/\*[\s\S]*?\*\//g, ' ')
    .replace(/'(?:[^'\\]|\\.|'')*'/g, "''")
  const out = new Map<string, string[]>()
  for (const m of text.matchAll(AFTER)) {
    const parts = [...(m[1] as string).matchAll(PART)].map(p => unquote(p[0]))
    if (parts.length === 1 && NOT_TABLES.has((parts[0] as string).toLowerCase())) continue
    out.set(parts.map(p => p.toLowerCase()).join('\u0000'), parts)
  }
  return [...out.values()]
}

function unquote (part: string): string {
  if (part.startsWith('`')) return part.slice(1, -1).replaceAll('``', '`')
  if (part.startsWith('"')) return part.slice(1, -1).replaceAll('""', '"')
  return part
}
