/**
 * The shape every rule has, spec and platform alike: a stable id, a one-line purpose, a category,
 * and a check that yields findings. Rules judge; they never throw for a violation, never diff,
 * never load anything (buf's breaking rules, pyiceberg's visitors).
 */
import type { Change } from '../diff/schema-change.js'
import type { ApplyIssue } from '../../iceberg/apply-commit.js'
import type { Schema, TableMetadata } from '../../iceberg/types.js'
import type { DependentView, MissingRead } from '../../iceberg/view-reads.js'

export type Severity = 'error' | 'warn'
export type RuleSeverity = Severity | 'off'
export type RuleCategory = 'spec' | 'platform'

/**
 * What was decided about a write, the one verdict type of iceguard. Judging a change reaches the
 * first four (`JudgedVerdict`: the dry-run API and the CLI report those); the gate adds `refused`
 * (answered without judging the content: an unreadable body, a missing requirement, registration
 * off) and `error` (the upstream could not be consulted, or the forwarded commit's answer was lost).
 */
export type Verdict = JudgedVerdict | 'refused' | 'error'
export type JudgedVerdict = 'allow' | 'warn' | 'deny' | 'conflict'

/** How the commit relates to the table: decides which rules apply and how. */
export type CommitFlow =
  | 'update'          // a schema evolution of an existing table
  | 'revert'          // set-current-schema to an older existing schema
  | 'create'          // createTable (ids assigned by the server)
  | 'staged-create'   // the assert-create commit completing a staged create
  | 'replace'         // create-or-replace: ids reused by name, types may change
  | 'view'            // a view commit: structural checks only

export interface Finding {
  readonly rule: string
  readonly severity: Severity
  /** Stands alone: `Cannot <verb> <subject>: <detail>`. */
  readonly message: string
  readonly fieldId?: number
  readonly path?: string
  readonly oldType?: string
  readonly newType?: string
  /** Why this matters and what to do instead, for rules whose message cannot say it all. */
  readonly explanation?: string
  /** An error a verified break-glass override turned into this warning (src/gate/override.ts). */
  readonly overridden?: boolean
}

/** What a rule yields: a finding whose severity the policy decides. */
export type Violation = Omit<Finding, 'severity'>

export interface RuleContext {
  readonly flow: CommitFlow
  /** Table metadata before the commit; undefined for a create. */
  readonly base?: TableMetadata
  /** Table metadata after applying the commit's updates. */
  readonly proposed: TableMetadata
  /** The schema being left (current schema of `base`); undefined for a create. */
  readonly baseSchema?: Schema
  /** The schema that will be current after the commit. */
  readonly proposedSchema: Schema
  /** Changes from baseSchema to proposedSchema, by field id. Empty for a create. */
  readonly changes: readonly Change[]
  /** Schemas the commit adds (not only the one made current). */
  readonly addedSchemas: readonly Schema[]
  /**
   * Problems found while reading and applying the request (malformed updates, unknown schema ids).
   * Each names the rule that reports it (REQUEST_WELL_FORMED when none). Absent means none.
   */
  readonly issues?: readonly ApplyIssue[]
  /** Views of the catalog that read this table, as the view index knows them (table commits). */
  readonly dependents?: readonly DependentView[]
  /** For a view commit: what its new version reads that the tables it names do not have. */
  readonly viewReads?: readonly MissingRead[]
  /** Options for this rule from the policy (empty object when none). */
  readonly options: Readonly<Record<string, unknown>>
}

export interface Rule {
  /** UPPER_SNAKE, stable forever; the file name is its kebab form. */
  readonly id: string
  readonly category: RuleCategory
  /** One line: what the rule protects. */
  readonly purpose: string
  /** Severity when no policy says otherwise (spec rules: always 'error'). */
  readonly defaultSeverity: RuleSeverity
  /** Flows the rule applies to; absent means every flow but 'view'. */
  readonly flows?: readonly CommitFlow[]
  check (ctx: RuleContext): Iterable<Violation>
}

/**
 * How a policy tunes the rules for one table. The policy module resolves it from the YAML scopes;
 * `SPEC_ONLY_SETTINGS` (in `settings.ts`) is what applies when no policy is loaded.
 */
export interface RuleSettings {
  /** enforce: errors deny. warn: every finding is a warning. freeze: no schema, spec or sort-order change at all. */
  readonly mode: 'enforce' | 'warn' | 'freeze'
  severity (ruleId: string): RuleSeverity
  options (ruleId: string): Readonly<Record<string, unknown>>
  /** An exception in the policy (table or field path, not expired) switches the rule off here. */
  isExcepted (ruleId: string, path?: string): boolean
}
