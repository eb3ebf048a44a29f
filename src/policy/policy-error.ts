import { formatIssue, type PolicyIssue } from './yaml-source.js'

/** A policy or contract file that cannot be used; carries every problem found, not only the first. */
export class PolicyError extends Error {
  override readonly name = 'PolicyError'
  readonly issues: readonly PolicyIssue[]
  constructor (source: string, issues: readonly PolicyIssue[]) {
    super(`Cannot load policy ${source}: ${issues.length} problem${issues.length === 1 ? '' : 's'}\n` +
      issues.map(i => '  ' + formatIssue(i)).join('\n'))
    this.issues = issues
  }
}
