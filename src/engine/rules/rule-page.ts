/**
 * Rule documentation served by iceguard itself (`GET /rules/{RULE_ID}`): the section of
 * docs/rules.md headed `### RULE_ID`, rendered to HTML, so the link in an error message opens
 * for whoever reads it (a Spark user has no checkout of this repository). Markdown is rendered by
 * markdown-it with raw HTML off: the page is built from our own file, but nothing in it is
 * trusted as markup.
 */
import { readFileSync } from 'node:fs'
import MarkdownIt from 'markdown-it'
import { ruleCatalogue } from './index.js'

/** docs/rules.md next to the sources (src/engine/rules) or the build (dist/src/rules). */
function readRulesMarkdown (): string {
  for (const rel of ['../../../docs/rules.md', '../../../../docs/rules.md']) {
    try {
      return readFileSync(new URL(rel, import.meta.url), 'utf8')
    } catch {}
  }
  throw new Error('Cannot read docs/rules.md: it ships with iceguard (package files, image)')
}

/** `### RULE_ID` sections by id: the markdown from the heading to the next heading of level 2 or 3. */
function ruleSections (markdown: string): ReadonlyMap<string, string> {
  const sections = new Map<string, string>()
  let id: string | undefined
  let lines: string[] = []
  const close = (): void => { if (id !== undefined) sections.set(id, lines.join('\n').trim()) }
  for (const line of markdown.split('\n')) {
    const heading = /^(#{2,3}) (.*)$/.exec(line)
    if (heading !== null) {
      close()
      const name = (heading[2] as string).trim()
      id = heading[1] === '###' && /^[A-Z][A-Z0-9_]+$/.test(name) ? name : undefined
      lines = []
      continue
    }
    if (id !== undefined) lines.push(line)
  }
  close()
  return sections
}

const md = new MarkdownIt({ html: false, linkify: false, typographer: false })

function escapeHtml (s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')
}

let pages: ReadonlyMap<string, string> | undefined

/** The HTML page of one rule, or undefined for an id no rule has. Built once, on first use. */
export function rulePage (ruleId: string): string | undefined {
  pages ??= buildPages(readRulesMarkdown())
  return pages.get(ruleId)
}

function buildPages (markdown: string): ReadonlyMap<string, string> {
  const sections = ruleSections(markdown)
  const out = new Map<string, string>()
  for (const rule of ruleCatalogue()) {
    const section = sections.get(rule.id)
    if (section === undefined) continue
    out.set(rule.id, `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${rule.id} · iceguard rule</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#222}code{background:#f3f3f3;padding:0 .2em}pre{background:#f3f3f3;padding:.6em;overflow:auto}.meta{color:#555}</style>
</head>
<body>
<h1><code>${rule.id}</code></h1>
<p class="meta">${escapeHtml(rule.category)} rule · default severity <code>${escapeHtml(rule.defaultSeverity)}</code> · ${escapeHtml(rule.purpose)}</p>
${md.render(section)}
<p class="meta">Severities, options and exceptions are set in the policy; <a href="/admin/v1/rules">every rule</a> (JSON).</p>
</body>
</html>
`)
  }
  return out
}
