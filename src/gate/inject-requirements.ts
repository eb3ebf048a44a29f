/**
 * Race safety: the gate validates a commit against the metadata it loaded, but the upstream applies
 * the commit to whatever is current when the request arrives. The Iceberg requirements close that
 * window: with `assert-current-schema-id` (and `assert-last-assigned-field-id` when fields are
 * added) pinned to the values the gate validated, a concurrent schema change makes the upstream
 * answer 409 instead of committing a schema nobody checked (REST spec TableRequirement; every
 * requirement failure is a CommitFailedException).
 *
 * Java's SIMPLE schema updates already send both; PyIceberg and iceberg-rust send only the first;
 * curl callers often send none.
 *
 * Which flows get which requirement:
 * - update / revert: both, as Java sends them (the second only when the commit assigns new ids).
 * - replace (create-or-replace): Java sends `assert-last-assigned-field-id` but, by design, no
 *   `assert-current-schema-id` (it replaces whatever schema is current). The gate still judged the
 *   replacement against the schema it loaded (types kept under reused ids), so in `inject` mode it
 *   adds `assert-current-schema-id` too: a concurrent change then turns into a 409, which Java's
 *   replace transaction answers by refreshing and re-running the replace. In `require` mode a
 *   replace is only asked for the requirement Java sends, or every Java CREATE OR REPLACE would fail.
 *   A replace of a table with no snapshot (recognised without `remove-snapshot-ref main`, since no
 *   row is kept) also gets `assert-ref-snapshot-id` main null: rows appended meanwhile would
 *   otherwise meet the replacement's required columns without values.
 * - create, staged-create, view: never. There is no base (`assert-create` must stay the only
 *   requirement of a staged create: the reference server refuses any other).
 *
 * The requirements are added to the body as text (`splice-requirements.ts`), never by re-encoding it.
 */
import type { Change } from '../engine/diff/schema-change.js'
import type { CommitFlow } from '../engine/rules/rule.js'
import type { TableMetadata } from '../iceberg/types.js'
import { isObject } from '../iceberg/json-values.js'

const ASSERT_CURRENT_SCHEMA_ID = 'assert-current-schema-id'
const ASSERT_LAST_ASSIGNED_FIELD_ID = 'assert-last-assigned-field-id'
const ASSERT_REF_SNAPSHOT_ID = 'assert-ref-snapshot-id'
const MAIN = 'main'

/** A requirement the commit lacks, with the value the gate validated. */
export interface MissingRequirement {
  readonly type: typeof ASSERT_CURRENT_SCHEMA_ID | typeof ASSERT_LAST_ASSIGNED_FIELD_ID | typeof ASSERT_REF_SNAPSHOT_ID
  readonly field: 'current-schema-id' | 'last-assigned-field-id' | 'snapshot-id'
  /** null: the ref must not exist (`assert-ref-snapshot-id`). */
  readonly value: number | null
  /** The branch an `assert-ref-snapshot-id` names. */
  readonly ref?: string
  /** False when the client may legitimately leave it out (what Java's replace does not send). */
  readonly requiredOfClient: boolean
}

/** What the gate knows about the evaluated commit, as far as requirements go. */
interface EvaluatedChange {
  readonly flow: CommitFlow
  readonly schemaTouched: boolean
  readonly changes: readonly Change[]
  readonly proposed?: TableMetadata
}

/** The requirements a schema-changing commit should carry but does not. Empty for other commits. */
export function missingRequirements (
  request: unknown,
  base: TableMetadata | undefined,
  evaluation: EvaluatedChange
): MissingRequirement[] {
  if (base === undefined || !evaluation.schemaTouched || !touchesSchema(request)) return []
  const flow = evaluation.flow
  if (flow !== 'update' && flow !== 'revert' && flow !== 'replace') return []
  const present = requirementTypes(request)
  const missing: MissingRequirement[] = []
  if (!present.has(ASSERT_CURRENT_SCHEMA_ID)) {
    missing.push({
      type: ASSERT_CURRENT_SCHEMA_ID,
      field: 'current-schema-id',
      value: base.currentSchemaId,
      requiredOfClient: flow !== 'replace'
    })
  }
  if (!present.has(ASSERT_LAST_ASSIGNED_FIELD_ID) && addsFields(base, evaluation)) {
    missing.push({
      type: ASSERT_LAST_ASSIGNED_FIELD_ID,
      field: 'last-assigned-field-id',
      value: base.lastColumnId,
      requiredOfClient: true
    })
  }
  if (flow === 'replace' && !Object.hasOwn(base.refs, MAIN) && !removesMain(request) && !present.has(ASSERT_REF_SNAPSHOT_ID)) {
    missing.push({ type: ASSERT_REF_SNAPSHOT_ID, field: 'snapshot-id', value: null, ref: MAIN, requiredOfClient: false })
  }
  return missing
}

/** One requirement spelled as a client would send it, for messages. */
export function describeRequirement (m: MissingRequirement): string {
  return `{"type":"${m.type}",${m.ref === undefined ? '' : `"ref":${JSON.stringify(m.ref)},`}"${m.field}":${String(m.value)}}`
}

function removesMain (request: unknown): boolean {
  if (!isObject(request) || !Array.isArray(request.updates)) return false
  return request.updates.some(u => isObject(u) && typeof u.action === 'string' &&
    u.action.toLowerCase() === 'remove-snapshot-ref' && u['ref-name'] === MAIN)
}

function addsFields (base: TableMetadata, evaluation: EvaluatedChange): boolean {
  if (evaluation.changes.some(c => c.kind === 'field-added')) return true
  return evaluation.proposed !== undefined && evaluation.proposed.lastColumnId > base.lastColumnId
}

/**
 * Whether the commit adds a schema or switches the current one. A partition-spec or sort-order
 * change alone is judged too, but Java pins those with their own requirements
 * (assert-last-assigned-partition-id, assert-default-spec-id); demanding a schema assertion there
 * would refuse every Java `ADD PARTITION FIELD` in `require` mode.
 */
function touchesSchema (request: unknown): boolean {
  if (!isObject(request) || !Array.isArray(request.updates)) return false
  return request.updates.some(u => isObject(u) && typeof u.action === 'string' &&
    SCHEMA_ACTIONS.has(u.action.toLowerCase()))
}

const SCHEMA_ACTIONS = new Set(['add-schema', 'set-current-schema'])

function requirementTypes (request: unknown): Set<string> {
  const types = new Set<string>()
  if (!isObject(request) || !Array.isArray(request.requirements)) return types
  for (const r of request.requirements) {
    // Java reads the discriminator case-insensitively (UpdateRequirementParser lower-cases it).
    if (isObject(r) && typeof r.type === 'string') types.add(r.type.toLowerCase())
  }
  return types
}
