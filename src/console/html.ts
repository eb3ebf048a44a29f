/**
 * HTML built by a tagged template that escapes every interpolated value: table, column and rule
 * names are user input, so nothing reaches a page unescaped unless it is itself `Html` made here.
 */
export class Html {
  constructor (readonly text: string) {}
  toString (): string { return this.text }
}

const ENTITIES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

export function escapeHtml (s: string): string {
  return s.replace(/[&<>"']/g, c => ENTITIES[c] as string)
}

type Part = Html | string | number | boolean | null | undefined | readonly Part[]

function render (v: Part): string {
  if (v instanceof Html) return v.text
  if (Array.isArray(v)) return v.map(render).join('')
  if (v === undefined || v === null || v === false || v === true) return ''
  return escapeHtml(String(v))
}

export function html (strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0] as string
  values.forEach((v, i) => { out += render(v) + (strings[i + 1] as string) })
  return new Html(out)
}

/** A console path from segments, each percent-encoded (then escaped where it is interpolated). */
export function consolePath (...segments: string[]): string {
  return `/console/${segments.map(encodeURIComponent).join('/')}`
}

/** A query string of the non-empty values, for links that keep the filters. */
export function query (values: Readonly<Record<string, string | undefined>>): string {
  const q = new URLSearchParams()
  for (const [k, v] of Object.entries(values)) if (v !== undefined && v !== '') q.set(k, v)
  const s = q.toString()
  return s === '' ? '' : `?${s}`
}
