/** The spec rules, in the order their findings are reported. */
import type { Rule } from '../rule.js'
import { currentSchemaKnown } from './current-schema-known.js'
import { currentSchemaNotRemoved } from './current-schema-not-removed.js'
import { defaultValueValid } from './default-value-valid.js'
import { fieldIdNewAboveLast } from './field-id-new-above-last.js'
import { fieldIdNotReserved } from './field-id-not-reserved.js'
import { fieldIdNotReused } from './field-id-not-reused.js'
import { fieldIdUnique } from './field-id-unique.js'
import { fieldKindStable } from './field-kind-stable.js'
import { fieldNameUnique } from './field-name-unique.js'
import { fieldParentStable } from './field-parent-stable.js'
import { formatVersionTypes } from './format-version-types.js'
import { identifierFieldNotDropped } from './identifier-field-not-dropped.js'
import { identifierFieldValid } from './identifier-field-valid.js'
import { initialDefaultUnchanged } from './initial-default-unchanged.js'
import { mapKeyUnchanged } from './map-key-unchanged.js'
import { nullabilityNotTightened } from './nullability-not-tightened.js'
import { partitionNameNotTaken } from './partition-name-not-taken.js'
import { partitionSourceNotDropped } from './partition-source-not-dropped.js'
import { partitionSourceTypeSafe } from './partition-source-type-safe.js'
import { requestWellFormed } from './request-well-formed.js'
import { requiredFieldHasDefault } from './required-field-has-default.js'
import { sortSourceNotDropped } from './sort-source-not-dropped.js'
import { typePromotionValid } from './type-promotion-valid.js'

export const SPEC_RULE_LIST: readonly Rule[] = [
  requestWellFormed,
  currentSchemaKnown,
  currentSchemaNotRemoved,
  fieldIdUnique,
  fieldNameUnique,
  fieldIdNotReserved,
  fieldIdNewAboveLast,
  fieldIdNotReused,
  fieldKindStable,
  fieldParentStable,
  typePromotionValid,
  mapKeyUnchanged,
  nullabilityNotTightened,
  requiredFieldHasDefault,
  initialDefaultUnchanged,
  defaultValueValid,
  formatVersionTypes,
  identifierFieldValid,
  identifierFieldNotDropped,
  partitionSourceNotDropped,
  partitionSourceTypeSafe,
  partitionNameNotTaken,
  sortSourceNotDropped
]
