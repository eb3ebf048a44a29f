/**
 * Schema evolution without writing field ids: high-level changes applied to a table's current
 * schema (`applySchemaChanges`), the exact commit that installs the result (`buildCommitRequest`),
 * and the changes that bring a table into conformance with a contract (`planFromContract`).
 * Pure: no I/O; the admin route and the CLI do the talking.
 */
export { applySchemaChanges, type ChangeError } from './apply-changes.js'
export { readSchemaChanges, schemaChangeToWire, type SchemaChangeOp } from './change-ops.js'
export { buildCommitRequest } from './commit-request.js'
export { planFromContract, type Unresolved } from './plan-contract.js'
