import type { Rule, Violation } from '../rule.js'
import { ALL_FLOWS } from './helpers.js'

/**
 * The request itself can be read and applied: every update has a known action and the fields it
 * needs, every type string parses, every requirement is known. The spec demands a 400 for unknown
 * updates and requirements (REST spec, updateTable), and the Java fixture answers some of these
 * with a 5xx, which clients read as "commit state unknown".
 */
export const requestWellFormed: Rule = {
  id: 'REQUEST_WELL_FORMED',
  category: 'spec',
  purpose: 'The commit can be read and applied: known actions and requirements, required fields present, valid types.',
  defaultSeverity: 'error',
  flows: ALL_FLOWS,
  check (ctx) {
    const out: Violation[] = []
    for (const issue of ctx.issues ?? []) {
      if (issue.rule !== undefined && issue.rule !== 'REQUEST_WELL_FORMED') continue
      out.push({ rule: 'REQUEST_WELL_FORMED', message: issue.at === '' ? issue.message : `${issue.message} (at ${issue.at})` })
    }
    return out
  }
}
