/**
 * Schema evolution without writing field ids: high-level changes applied to a table's current
 * schema (`applySchemaChanges`), the exact commit that installs the result (`buildCommitRequest`),
 * and the changes that bring a table into conformance with a contract (`planFromContract`).
 * Pure: no I/O; the admin route and the CLI do the talking.
 */
export { applySchemaChanges, currentSchemaOf, protectedIds, type ChangeError, type EvolveResult } from './apply-changes.js'
export { CHANGE_KINDS, changeLabel, readSchemaChanges, schemaChangeToWire, type SchemaChangeKind, type SchemaChangeOp, type TypeInput } from './change-ops.js'
export { buildCommitRequest, type CommitTableRequestJson } from './commit-request.js'
export { planFromContract, type ContractPlan, type Unresolved } from './plan-contract.js'
export { readSchemaInput, readTypeInput } from './type-input.js'
