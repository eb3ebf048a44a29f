/** The decisions page: recent judged writes, newest first, with filters. */
import { namespaceSegment, tableName } from '../iceberg/rest-path.js'
import { DECISION_VERDICTS } from '../schemas/decisions.js'
import type { DecisionFilters, DecisionPage, DecisionRecord } from './decision-source.js'
import { consolePath, html, query, type Html } from './html.js'

/**
 * A link to the table's page. The decision record keeps namespace levels and name but not the
 * route's catalog prefix, so the link cannot carry one.
 */
export function tableLink (t: DecisionRecord['table']): Html {
  return html`<a href="${consolePath('tables', namespaceSegment(t.namespace), t.name)}">${tableName(t)}</a>`
}

export function changesText (changes: unknown): string {
  if (changes === undefined || changes === null) return ''
  if (typeof changes === 'string') return changes
  if (Array.isArray(changes)) {
    return changes.map(c => typeof c === 'object' && c !== null && 'kind' in c
      ? `${String((c as { kind: unknown }).kind)}${'field-id' in c ? ` of field id ${String((c as Record<string, unknown>)['field-id'])}` : ''}`
      : JSON.stringify(c)).join('; ')
  }
  if (typeof changes === 'object' && 'summary' in changes) return String((changes as { summary: unknown }).summary)
  return JSON.stringify(changes)
}

function overrideText (override: unknown): string {
  if (override === undefined || override === null || override === false) return ''
  if (typeof override === 'string') return override
  if (typeof override === 'object' && 'id' in override) return String((override as { id: unknown }).id)
  return JSON.stringify(override)
}

/** A finding as one line: rule (linked to its page), severity, field id, path, message. */
export function findingItem (f: DecisionRecord['findings'][number]): Html {
  return html`<li><a href="/rules/${encodeURIComponent(f.rule)}"><code>${f.rule}</code></a> ${f.severity}${f['field-id'] === undefined || f['field-id'] === null ? '' : html` · field id ${f['field-id']}`}${f.path === undefined || f.path === null ? '' : html` · <code>${f.path}</code>`}: ${f.message}</li>`
}

function decisionPath (id: string): string {
  return consolePath('decisions', id)
}

function row (d: DecisionRecord): Html {
  return html`<tr data-decision="${d.id}">
<td><a href="${decisionPath(d.id)}"><time datetime="${d.time}">${d.time}</time></a></td><td>${tableLink(d.table)}</td><td>${d.kind}</td>
<td><span class="verdict verdict-${d.verdict}">${d.verdict}</span></td><td>${d.principal ?? ''}</td>
<td>${d.findings.length === 0 ? '' : html`<ul>${d.findings.map(findingItem)}</ul>`}</td>
<td>${changesText(d.changes)}</td><td>${overrideText(d.override)}</td></tr>`
}

/** `result` is a page of decisions, or a sentence saying why there is none to show. */
export function decisionsBody (filters: DecisionFilters, result: DecisionPage | { readonly unavailable: string }): Html {
  const form = html`<form class="filters" method="get" action="/console/decisions">
<label>Namespace<input name="namespace" value="${filters.namespace ?? ''}" placeholder="finance"></label>
<label>Table<input name="table" value="${filters.table ?? ''}" placeholder="orders"></label>
<label>Verdict<select name="verdict"><option value="">any</option>${DECISION_VERDICTS.map(v => html`<option value="${v}"${v === filters.verdict ? html` selected` : ''}>${v}</option>`)}</select></label>
<label>Rule<input name="rule" value="${filters.rule ?? ''}" placeholder="COLUMN_NO_DROP"></label>
<button type="submit">Filter</button> <a href="/console/decisions">clear</a></form>`
  if ('unavailable' in result) return html`${form}<p class="notice error">${result.unavailable}</p>`
  if (result.decisions.length === 0) return html`${form}<p class="notice">No decisions match these filters.</p>`
  const next = result.nextPageToken === undefined
    ? ''
    : html`<p><a rel="next" href="/console/decisions${query({ namespace: filters.namespace, table: filters.table, verdict: filters.verdict, rule: filters.rule, 'page-token': result.nextPageToken })}">Older decisions →</a></p>`
  return html`${form}<table class="decisions"><thead><tr><th>Time</th><th>Table</th><th>Kind</th><th>Verdict</th><th>Principal</th><th>Findings</th><th>Changes</th><th>Override</th></tr></thead>
<tbody>${result.decisions.map(row)}</tbody></table>${next}`
}
