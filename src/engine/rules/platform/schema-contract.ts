import { checkContract, type Contract, type ContractViolation } from '../../../contract/contract.js'
import type { PlatformRule } from './platform-rule.js'

function isContract (v: unknown): v is Contract {
  return typeof v === 'object' && v !== null && Array.isArray((v as Contract).columns)
}

const key = (v: ContractViolation): string => `${v.kind}:${v.fieldId ?? v.path}`

/**
 * Holds a table to its schema contract (a YAML file referenced from the policy). Only violations
 * this commit introduces are findings: a table that already breaks a freshly written contract can
 * still take unrelated commits, and the admin contract endpoint lists what is outstanding.
 */
export const SCHEMA_CONTRACT: PlatformRule = {
  id: 'SCHEMA_CONTRACT',
  category: 'platform',
  purpose: 'Holds a table to its schema contract: required columns with type, required flag and doc; strict contracts forbid other columns.',
  defaultSeverity: 'error',
  * check (ctx) {
    const contract = ctx.options.contract
    if (!isContract(contract)) return
    const formatVersion = ctx.proposed.formatVersion
    const before = ctx.baseSchema === undefined || ctx.flow === 'create' || ctx.flow === 'staged-create'
      ? new Set<string>()
      : new Set(checkContract(contract, ctx.baseSchema, ctx.base?.formatVersion ?? formatVersion).map(key))
    for (const v of checkContract(contract, ctx.proposedSchema, formatVersion)) {
      if (before.has(key(v))) continue
      yield {
        rule: this.id,
        message: v.message,
        ...(v.fieldId !== undefined && { fieldId: v.fieldId }),
        path: v.path,
        ...(v.kind === 'type' && v.actual !== undefined && { newType: v.actual }),
        explanation: `The contract ${contract.source} (${contract.columns.length} column${contract.columns.length === 1 ? '' : 's'}${contract.strict ? ', strict' : ''}) is agreed with this table's consumers; change the contract first if the change is intended.`
      }
    }
  }
}
