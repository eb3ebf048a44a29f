/**
 * The platform rules, in catalogue order. Each is off under `builtin:spec`; under
 * `builtin:recommended` each runs at its `defaultSeverity`. Policies tune them per scope.
 */
import { COLUMN_COUNT_MAX } from './column-count-max.js'
import { COLUMN_DOC_REQUIRED } from './column-doc-required.js'
import { COLUMN_NAME_PATTERN } from './column-name-pattern.js'
import { COLUMN_NO_DROP } from './column-no-drop.js'
import { COLUMN_NO_DROP_PARTITION_OR_SORT_SOURCE } from './column-no-drop-partition-or-sort-source.js'
import { COLUMN_NO_MAKE_OPTIONAL } from './column-no-make-optional.js'
import { COLUMN_NO_RENAME } from './column-no-rename.js'
import { COLUMN_NO_TYPE_CHANGE } from './column-no-type-change.js'
import { COLUMN_PROTECTED } from './column-protected.js'
import { DROP_THEN_ADD_SAME_NAME } from './drop-then-add-same-name.js'
import { DROPPED_NAME_REUSED } from './dropped-name-reused.js'
import { NESTING_DEPTH_MAX } from './nesting-depth-max.js'
import { NEW_COLUMNS_MAX } from './new-columns-max.js'
import type { PlatformRule } from './platform-rule.js'
import { PROMOTION_READER_SUPPORTED } from './promotion-reader-supported.js'
import { RENAME_THEN_ADD_SAME_NAME } from './rename-then-add-same-name.js'
import { REPLACE_NO_TYPE_CHANGE } from './replace-no-type-change.js'
import { SCHEMA_COMPATIBILITY } from './schema-compatibility.js'
import { SCHEMA_CONTRACT } from './schema-contract.js'
import { VIEW_REFERENCES_COLUMN } from './view-references-column.js'

export const PLATFORM_RULES: PlatformRule[] = [
  COLUMN_NO_DROP,
  COLUMN_NO_RENAME,
  DROP_THEN_ADD_SAME_NAME,
  DROPPED_NAME_REUSED,
  RENAME_THEN_ADD_SAME_NAME,
  COLUMN_NO_DROP_PARTITION_OR_SORT_SOURCE,
  COLUMN_NO_TYPE_CHANGE,
  COLUMN_NO_MAKE_OPTIONAL,
  PROMOTION_READER_SUPPORTED,
  REPLACE_NO_TYPE_CHANGE,
  COLUMN_PROTECTED,
  VIEW_REFERENCES_COLUMN,
  SCHEMA_CONTRACT,
  SCHEMA_COMPATIBILITY,
  COLUMN_DOC_REQUIRED,
  COLUMN_NAME_PATTERN,
  COLUMN_COUNT_MAX,
  NEW_COLUMNS_MAX,
  NESTING_DEPTH_MAX
]
