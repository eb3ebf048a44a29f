/**
 * Reading schema contracts (src/contract/contract.ts) from YAML: a contract file, or a policy's
 * inline contract, validated against the contract file schema with every problem reported.
 */
import { TypeCompiler } from '@sinclair/typebox/compiler'
import type { Contract, ContractColumn } from '../contract/contract.js'
import { parseContractType } from '../contract/contract-type.js'
import { isObject } from '../iceberg/json-values.js'
import { ContractSchema } from './contract-schema.js'
import { schemaIssues, sortIssues } from './schema-issues.js'
import { readYaml, type PolicyIssue, type YamlSource } from './yaml-source.js'

export { checkContract, type Contract } from '../contract/contract.js'

const checkFile = TypeCompiler.Compile(ContractSchema)

/** Reads a contract that sits at `pointer` inside an already-parsed YAML file (a policy's inline contract). */
export function contractFromYaml (y: YamlSource, pointer: readonly (string | number)[], value: unknown, source: string): { contract?: Contract, errors: PolicyIssue[] } {
  // Schema problems and type-language problems are reported together; entries the schema
  // refused are skipped by the second pass.
  const errors = schemaIssues(y, pointer, checkFile.Errors(value))
  const file: { columns?: unknown, strict?: unknown } = isObject(value) ? value : {}
  const columns: ContractColumn[] = []
  const seen = new Set<string>()
  const entries = Array.isArray(file.columns) ? file.columns as Array<{ name?: unknown, type?: unknown, required?: boolean, doc?: string }> : []
  entries.forEach((c, i) => {
    if (typeof c !== 'object' || c === null || typeof c.name !== 'string' || typeof c.type !== 'string') return
    if (seen.has(c.name)) errors.push(y.at([...pointer, 'columns', i, 'name'], `Duplicate contract column "${c.name}"`))
    seen.add(c.name)
    try {
      const type = parseContractType(c.type)
      columns.push({ name: c.name, type, ...(c.required !== undefined && { required: c.required }), ...(c.doc !== undefined && { doc: c.doc }) })
    } catch (err) {
      errors.push(y.at([...pointer, 'columns', i, 'type'], (err as Error).message))
    }
  })
  if (errors.length > 0) return { errors: sortIssues(errors) }
  return { contract: { source, columns, strict: file.strict === true }, errors }
}

export function parseContract (text: string, source: string): { contract?: Contract, errors: PolicyIssue[] } {
  const y = readYaml(text, source)
  if (y.issues.length > 0) return { errors: y.issues }
  return contractFromYaml(y, [], y.value, source)
}
