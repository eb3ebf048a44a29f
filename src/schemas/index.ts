/**
 * Every shared shape of the HTTP API, to be added to Fastify once (`addSchema`): ajv resolves the
 * `$ref`s by `$id`, and @fastify/swagger emits each as a named component.
 */
import type { TSchema } from '@sinclair/typebox'
import { SchemaChangeSchema } from './change.js'
import { CompatibilityRequestSchema, CompatibilityResponseSchema } from './compatibility.js'
import { ContractReportSchema, ContractViolationSchema } from './contract-report.js'
import { DECISION_SCHEMAS } from './decisions.js'
import { DiffRequestSchema, DiffResponseSchema } from './diff.js'
import { EffectivePolicySchema, PolicyReloadSchema } from './effective-policy.js'
import { ErrorModelSchema, IcebergErrorResponseSchema } from './error-model.js'
import { FindingSchema, RuleIdSchema, SeveritySchema } from './finding.js'
import {
  CommitTableRequestSchema, CommitTableResponseSchema, CommitTransactionRequestSchema, CreateTableRequestSchema,
  IcebergTypeSchema, LoadTableResultSchema, SchemaJsonSchema, TableIdentifierSchema, TableMetadataJsonSchema
} from './iceberg-rest.js'
import { HealthSchema, ReadinessSchema } from './ops.js'
import { RuleCatalogueSchema, RuleInfoSchema } from './rule-catalogue.js'
import { SCHEMA_CHANGES_SCHEMAS } from './schema-changes.js'
import { DroppedNameSchema, FieldLineageSchema, SchemaHistorySchema, SchemaVersionSchema } from './schema-history.js'
import { VIEW_INDEX_SCHEMAS } from './view-index.js'
import { CommitFlowSchema, OverrideAppliedSchema, TableValidationSchema, ValidateRequestSchema, ValidateResponseSchema, VerdictSchema } from './validate.js'

export const SHARED_SCHEMAS: readonly TSchema[] = [
  ErrorModelSchema, IcebergErrorResponseSchema,
  TableIdentifierSchema, IcebergTypeSchema, SchemaJsonSchema, TableMetadataJsonSchema,
  CommitTableRequestSchema, CommitTransactionRequestSchema, CreateTableRequestSchema, CommitTableResponseSchema, LoadTableResultSchema,
  RuleIdSchema, SeveritySchema, FindingSchema, SchemaChangeSchema,
  VerdictSchema, CommitFlowSchema, OverrideAppliedSchema, ValidateRequestSchema, TableValidationSchema, ValidateResponseSchema,
  DiffRequestSchema, DiffResponseSchema,
  CompatibilityRequestSchema, CompatibilityResponseSchema,
  SchemaVersionSchema, FieldLineageSchema, DroppedNameSchema, SchemaHistorySchema,
  ContractViolationSchema, ContractReportSchema,
  RuleInfoSchema, RuleCatalogueSchema,
  EffectivePolicySchema, PolicyReloadSchema,
  HealthSchema, ReadinessSchema,
  ...SCHEMA_CHANGES_SCHEMAS,
  ...DECISION_SCHEMAS,
  ...VIEW_INDEX_SCHEMAS
]

/** Minimal view of a Fastify instance, so this module stays free of Fastify imports. */
interface SchemaHost {
  getSchema (id: string): unknown
  addSchema (schema: unknown): unknown
}

/** Adds the shared shapes an instance does not have yet (idempotent: plugins may share a root). */
export function addSharedSchemas (app: SchemaHost): void {
  for (const s of SHARED_SCHEMAS) if (s.$id !== undefined && app.getSchema(s.$id) === undefined) app.addSchema(s)
}
