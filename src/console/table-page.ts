/**
 * The table page: the schema timeline (each version, its diff to the one before, by field id),
 * field lineage with renames and drops marked, the effective policy, the contract status and the
 * overrides in force.
 */
import { namespaceName, namespaceSegment, type TableRef } from '../iceberg/rest-path.js'
import type { WireChange } from '../schemas/change.js'
import type { ContractReport } from '../schemas/contract-report.js'
import type { EffectivePolicyWire } from '../schemas/effective-policy.js'
import type { SchemaHistory } from '../schemas/schema-history.js'
import { consolePath, html, query, type Html } from './html.js'
import type { OverrideInForce } from './override-source.js'
import type { DependentView } from '../iceberg/view-reads.js'

/** Either the value, or a sentence saying why it could not be shown. */
export type Shown<T> = { readonly ok: true, readonly value: T } | { readonly ok: false, readonly problem: string }

/** `schemas-from` of the page that starts at the first schema (whose page token is empty); no page token reads so. */
export const FIRST_SCHEMA_PAGE = 'first'

/** Links from the schemas shown to the pages beside them (each absent when there is none). */
export interface SchemaPages {
  /** The schemas just before the first one shown: the page token where they start, and how many. */
  readonly older?: { readonly from: string, readonly count: number }
  /** Shown when the newest schemas are not on this page. */
  readonly newest?: { readonly count: number }
}

export interface TableView {
  readonly table: Pick<TableRef, 'namespace' | 'name'>
  /** The catalog's `{prefix}` path segment the table was read under, kept in the page's links. */
  readonly prefix?: string
  readonly history: Shown<SchemaHistory>
  readonly pages: SchemaPages
  readonly policy: EffectivePolicyWire
  /** undefined: no contract applies to the table. */
  readonly contract: Shown<ContractReport> | undefined
  readonly overrides: Shown<readonly OverrideInForce[]>
  /** The views of the catalog that read the table (the view index), and whether the index is complete. */
  readonly dependents?: Shown<{ readonly views: readonly DependentView[], readonly complete: boolean }>
}

function typeText (t: unknown): string {
  return typeof t === 'string' ? t : JSON.stringify(t)
}

function change (c: WireChange): Html {
  switch (c.kind) {
    case 'field-renamed':
      return html`<li data-change="rename" data-field-id="${c['field-id']}"><span class="mark mark-rename">rename</span> field id ${c['field-id']}: <code>${c['old-path']}</code> → <code>${c.path}</code></li>`
    case 'field-dropped':
      return html`<li data-change="drop" data-field-id="${c['field-id']}"><span class="mark mark-drop">drop</span> field id ${c['field-id']}: <code>${c.path}</code> (${typeText(c.field.type)})</li>`
    case 'field-added':
      return html`<li data-change="add" data-field-id="${c['field-id']}"><span class="mark mark-add">add</span> field id ${c['field-id']}: <code>${c.path}</code> (${typeText(c.field.type)}${c.field.required ? ', required' : ''})</li>`
    case 'identifier-fields-changed':
      return html`<li data-change="identifier"><span class="mark mark-other">identifier fields</span> added ${c.added.join(', ') || 'none'}; removed ${c.removed.join(', ') || 'none'}</li>`
    case 'type-changed':
    case 'kind-changed':
      return html`<li data-change="${c.kind}" data-field-id="${c['field-id']}"><span class="mark mark-other">${c.kind}</span> field id ${c['field-id']}: <code>${c.path}</code> ${typeText(c.from)} → ${typeText(c.to)}</li>`
    case 'nullability-changed':
      return html`<li data-change="${c.kind}" data-field-id="${c['field-id']}"><span class="mark mark-other">${c.kind}</span> field id ${c['field-id']}: <code>${c.path}</code> ${c.from} → ${c.to}</li>`
    default:
      return html`<li data-change="${c.kind}" data-field-id="${c['field-id']}"><span class="mark mark-other">${c.kind}</span> field id ${c['field-id']}: <code>${c.path}</code></li>`
  }
}

function pageLinks (view: TableView): Html {
  const here = consolePath('tables', namespaceSegment(view.table.namespace), view.table.name)
  const { older, newest } = view.pages
  const links = [
    newest === undefined ? '' : html`<a rel="first" href="${here}${query({ prefix: view.prefix, schemas: String(newest.count) })}">← Newest schemas</a> `,
    older === undefined ? '' : html`<a rel="next" href="${here}${query({ prefix: view.prefix, 'schemas-from': older.from === '' ? FIRST_SCHEMA_PAGE : older.from, schemas: String(older.count) })}">Older schemas →</a>`
  ]
  return newest === undefined && older === undefined ? html`` : html`<p class="schema-pages">${links}</p>`
}

/** Newest first: the page holds the newest schemas unless an older page was asked for. */
function timeline (h: SchemaHistory, pages: Html): Html {
  const versions = [...h.schemas].reverse()
  const lineage = html`<table class="lineage"><thead><tr><th>Field id</th><th>Names, oldest first</th><th>Type</th><th>Added in schema</th><th>Status</th></tr></thead><tbody>
${h.lineage.map(l => html`<tr data-field-id="${l['field-id']}"${l['dropped-in-schema-id'] === undefined ? '' : html` class="dropped-field"`}><td>${l['field-id']}</td>
<td>${l.names.map((n, i) => html`${i > 0 ? html` <span class="mark mark-rename">renamed to</span> ` : ''}<code>${n}</code>`)}</td><td>${l.type}</td><td>${l['added-in-schema-id']}</td>
<td>${l['dropped-in-schema-id'] === undefined ? (l['in-current-schema'] ? 'live' : 'not in the current schema') : html`<span class="mark mark-drop">dropped</span> in schema ${l['dropped-in-schema-id']}`}</td></tr>`)}
</tbody></table>`
  const reused = h['dropped-names'].filter(d => d['reused-by-field-id'] !== undefined)
  return html`<p>Format version ${h['format-version']}, current schema ${h['current-schema-id']}, last column id ${h['last-column-id']}.</p>
${versions.map(v => html`<section class="schema-version" data-schema-id="${v['schema-id']}"><h3${v.current ? html` class="current"` : ''}>Schema ${v['schema-id']}${v.current ? ' (current)' : ''}${v['previous-schema-id'] === undefined ? '' : html`, after schema ${v['previous-schema-id']}`}</h3>
<p>${v.summary}</p>${v.changes.length === 0 ? '' : html`<ul>${v.changes.map(change)}</ul>`}</section>`)}
${pages}<h3>Field lineage by id (the whole history)</h3>${lineage}
${reused.length === 0 ? '' : html`<p class="notice error">${reused.map(d => html`The name <code>${d.name}</code> of dropped field id ${d['field-id']} is carried again by field id ${d['reused-by-field-id']}: readers matching by name see different data. `)}</p>`}`
}

function policy (p: EffectivePolicyWire): Html {
  return html`<p>Policy <code>${p.policy}</code>; mode <strong>${p.mode.value}</strong> (from ${p.mode.source}); compatibility <strong>${p.compatibility.value}</strong> (from ${p.compatibility.source}); scopes ${p.scopes.join(', ') || 'none'}.</p>
<table class="rules"><thead><tr><th>Rule</th><th>Severity</th><th>From</th></tr></thead><tbody>
${p.rules.map(r => html`<tr><td><code>${r.rule}</code></td><td>${r.severity}</td><td>${r.source}</td></tr>`)}</tbody></table>
${p.exceptions.length === 0 ? '' : html`<h3>Exceptions</h3><ul>${p.exceptions.map(x => html`<li>${x.rules.join(', ')}${x.path === undefined ? '' : html` on <code>${x.path}</code>`}${x.expires === undefined ? '' : html`, until ${x.expires}`}${x.active ? '' : ' (lapsed)'}${x.reason === undefined ? '' : html`: ${x.reason}`}</li>`)}</ul>`}`
}

function contract (c: TableView['contract']): Html {
  if (c === undefined) return html`<p class="notice">No contract applies to this table.</p>`
  if (!c.ok) return html`<p class="notice error">${c.problem}</p>`
  const r = c.value
  if (r['meets-contract']) return html`<p class="contract-ok">Schema ${r['schema-id']} meets the contract <code>${r.source}</code>${r.strict ? ' (strict)' : ''}.</p>`
  return html`<p class="contract-broken">Schema ${r['schema-id']} does not meet the contract <code>${r.source}</code>${r.strict ? ' (strict)' : ''}:</p>
<ul>${r.violations.map(v => html`<li><span class="mark mark-drop">${v.kind}</span> <code>${v.path}</code>: ${v.message}</li>`)}</ul>`
}

function overrides (o: TableView['overrides']): Html {
  if (!o.ok) return html`<p class="notice">${o.problem}</p>`
  if (o.value.length === 0) return html`<p>No override is in force for this table.</p>`
  return html`<table class="overrides"><thead><tr><th>Id</th><th>Minted by</th><th>Rules</th><th>Expires</th><th>Reason</th></tr></thead><tbody>
${o.value.map(x => html`<tr><td><code>${x.id}</code></td><td>${x.principal ?? ''}</td><td>${x.rules.join(', ')}</td><td>${x.expires}</td><td>${x.reason ?? ''}</td></tr>`)}</tbody></table>`
}

export function tableBody (view: TableView): Html {
  return html`<p><a href="/console/decisions${query({ namespace: namespaceName(view.table.namespace), table: view.table.name })}">Decisions for this table</a></p>
<h2>Schema timeline</h2>${view.history.ok ? timeline(view.history.value, pageLinks(view)) : html`<p class="notice error">${view.history.problem}</p>`}
<h2>Effective policy</h2>${policy(view.policy)}
<h2>Contract</h2>${contract(view.contract)}
<h2>Overrides in force</h2>${overrides(view.overrides)}
<h2>Views that read this table</h2>${dependents(view.dependents)}`
}

/** The views a rename or drop here would break: names and columns only, never their SQL. */
function dependents (shown: TableView['dependents']): Html {
  if (shown === undefined) return html`<p>The view index is not available on this server.</p>`
  if (!shown.ok) return html`<p class="notice error">${shown.problem}</p>`
  const note = shown.value.complete ? html`` : html`<p class="notice">The catalog has not been crawled completely: views written through iceguard are listed, others may be missing.</p>`
  if (shown.value.views.length === 0) return html`${note}<p>No view is known to read this table.</p>`
  const columns = (v: DependentView): Html => v.star || !v.parsed
    ? html`<em>every column</em>${v.parsed ? html` (<code>*</code>)` : html` (its SQL could not be parsed)`}`
    : html`${v.columns.map((c, i) => html`${i === 0 ? '' : ', '}<code>${c.name}</code>${c.fieldId === undefined ? '' : html` (id ${c.fieldId})`}`)}`
  return html`${note}<table class="dependents"><thead><tr><th>View</th><th>Dialects</th><th>Columns read</th></tr></thead><tbody>${shown.value.views.map(v =>
    html`<tr data-view="${[...v.namespace, v.name].join('.')}"><td><code>${[...v.namespace, v.name].join('.')}</code></td><td>${v.dialects.join(', ')}</td><td>${columns(v)}</td></tr>`)}</tbody></table>`
}
