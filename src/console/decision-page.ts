/** The page of one decision: every field of the record, its findings with their rules, the override used. */
import type { DecisionRecord } from './decision-source.js'
import { changesText, findingItem, tableLink } from './decisions-page.js'
import { html, type Html } from './html.js'

function overrideBlock (override: unknown): Html {
  if (override === undefined || override === null || override === false) return html`<p>No override was used.</p>`
  if (typeof override === 'string') return html`<p>Override <code>${override}</code>.</p>`
  if (typeof override === 'object' && 'id' in override) {
    const o = override as { id: unknown, rules?: unknown }
    const rules = Array.isArray(o.rules) ? o.rules.map(String) : []
    return html`<p>Override <code>${String(o.id)}</code>${rules.length === 0 ? '' : html`, waiving ${rules.map((r, i) => html`${i === 0 ? '' : ', '}<a href="/rules/${encodeURIComponent(r)}"><code>${r}</code></a>`)}`}.</p>`
  }
  return html`<p>Override <code>${JSON.stringify(override)}</code>.</p>`
}

export function decisionBody (d: DecisionRecord): Html {
  const fields: Array<[string, Html | string]> = [
    ['Id', d.id],
    ['Time', html`<time datetime="${d.time}">${d.time}</time>`],
    ['Request id', d['request-id'] ?? ''],
    ['Table', tableLink(d.table)],
    ['Namespace levels', html`${d.table.namespace.map((level, i) => html`${i === 0 ? '' : ' · '}<code>${level}</code>`)}`],
    ['Kind', d.kind],
    ['Verdict', html`<span class="verdict verdict-${d.verdict}">${d.verdict}</span>`],
    ['Principal', d.principal ?? ''],
    ['Changes', changesText(d.changes)]
  ]
  return html`<p><a href="/console/decisions">← All decisions</a></p>
<dl class="decision" data-decision="${d.id}">${fields.map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}</dl>
<h2>Findings</h2>${d.findings.length === 0 ? html`<p>No findings.</p>` : html`<ul class="findings">${d.findings.map(findingItem)}</ul>`}
${brokenViews(d)}<h2>Override</h2>${overrideBlock(d.override)}`
}

/** VIEW_REFERENCES_COLUMN names one view per finding (`… view ns.v (spark) reads …`): the views this change would break. */
function brokenViews (d: DecisionRecord): Html {
  const views = [...new Set(d.findings.filter(f => f.rule === 'VIEW_REFERENCES_COLUMN')
    .map(f => /\bview (\S+) \(/.exec(f.message)?.[1]).filter((v): v is string => v !== undefined))]
  if (views.length === 0) return html``
  return html`<h2>Views it would break</h2><ul class="views">${views.map(v => html`<li data-view="${v}"><code>${v}</code></li>`)}</ul>`
}
