/**
 * A terminal-readable summary of a diff, one line per change:
 *
 *   + added     3 address.zip: string (optional)
 *   ~ renamed   2 amount -> total
 *   ! dropped   4 legacy: int
 *
 * `+` adds, `~` compatible edits, `!` changes that lose data or need a look. A drop of `x` next to an
 * add of a new `x` is spelled out, because readers (and some tools) mistake it for a rename.
 */
import { showValue } from '../../iceberg/json-values.js'
import { typeToString } from '../../iceberg/print.js'
import type { Change } from './schema-change.js'

const pad = (word: string): string => word.padEnd(10)

function line (c: Change): string {
  switch (c.kind) {
    case 'field-added':
      return `+ ${pad('added')}${c.fieldId} ${c.path}: ${typeToString(c.field.type)} (${c.field.required ? 'required' : 'optional'})`
    case 'field-dropped':
      return `! ${pad('dropped')}${c.fieldId} ${c.path}: ${typeToString(c.field.type)}`
    case 'field-renamed':
      return `~ ${pad('renamed')}${c.fieldId} ${c.oldPath} -> ${c.path}`
    case 'type-changed':
      return `~ ${pad('retyped')}${c.fieldId} ${c.path}: ${typeToString(c.from)} -> ${typeToString(c.to)}`
    case 'kind-changed':
      return `! ${pad('rekinded')}${c.fieldId} ${c.path}: ${typeToString(c.from)} -> ${typeToString(c.to)}`
    case 'nullability-changed':
      return `${c.to === 'required' ? '!' : '~'} ${pad(c.to)}${c.fieldId} ${c.path}: ${c.from} -> ${c.to}`
    case 'doc-changed':
      return `~ ${pad('doc')}${c.fieldId} ${c.path}: ${showValue(c.from)} -> ${showValue(c.to)}`
    case 'default-changed':
      return `${c.which === 'initial-default' ? '!' : '~'} ${pad('default')}${c.fieldId} ${c.path}: ${c.which} ${showValue(c.from)} -> ${showValue(c.to)}`
    case 'field-moved':
      return `! ${pad('moved')}${c.fieldId} ${c.oldPath} -> ${c.path}`
    case 'field-reordered':
      return `~ ${pad('reordered')}${c.fieldId} ${c.path}: position ${c.oldIndex} -> ${c.newIndex}`
    case 'identifier-fields-changed': {
      const parts = [
        ...(c.added.length > 0 ? [`+ [${c.added.join(', ')}]`] : []),
        ...(c.removed.length > 0 ? [`- [${c.removed.join(', ')}]`] : [])
      ]
      return `~ identifier fields ${parts.join(' ')}`
    }
  }
}

/** One line per change, then one line per drop-then-add of the same name ("not a rename"). */
export function summarizeChanges (changes: readonly Change[]): string {
  if (changes.length === 0) return 'no schema changes'
  const lines = changes.map(line)
  const addedByPath = new Map<string, number>()
  for (const c of changes) if (c.kind === 'field-added') addedByPath.set(c.path, c.fieldId)
  for (const c of changes) {
    if (c.kind !== 'field-dropped') continue
    const newId = addedByPath.get(c.path)
    if (newId !== undefined) {
      lines.push(`! dropped ${c.path} (id ${c.fieldId}) and added a new ${c.path} (id ${newId}): not a rename, existing values of ${c.path} are not carried over`)
    }
  }
  return lines.join('\n')
}
