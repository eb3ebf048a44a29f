/** The frame of every console page: title, navigation, who is signed in, and one small stylesheet. */
import { html, Html } from './html.js'

const STYLE = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#1d2330;color:#fff;padding:.6rem 1.2rem;display:flex;gap:1.2rem;align-items:center}
header a{color:#cfe3ff;text-decoration:none}header .who{margin-left:auto;font-size:.9em;color:#aab}
header form{display:inline;margin:0}header button{font-size:.85em}
main{padding:1rem 1.2rem;max-width:72rem}
h1{font-size:1.35rem;margin:.2rem 0 1rem}h2{font-size:1.1rem;margin:1.6rem 0 .5rem}h3{font-size:1rem;margin:1rem 0 .3rem}
table{border-collapse:collapse;width:100%;background:#fff;margin:.4rem 0}
th,td{border:1px solid #dde1e8;padding:.3rem .5rem;text-align:left;vertical-align:top}th{background:#eef1f5;font-weight:600}
code{font:12.5px ui-monospace,Menlo,Consolas,monospace;background:#eef1f5;padding:0 .2em;border-radius:3px}
.verdict,.mark{display:inline-block;padding:0 .45em;border-radius:3px;font-size:.85em;font-weight:600}
.verdict-deny,.mark-drop{background:#fde2e1;color:#9b1c1c}.verdict-warn,.mark-rename{background:#fff4d6;color:#7a5200}
.verdict-allow{background:#dff5e3;color:#17602a}.verdict-conflict,.verdict-override,.mark-other{background:#e6ecff;color:#23408e}
.mark-add{background:#dff5e3;color:#17602a}
.filters{display:flex;gap:.6rem;flex-wrap:wrap;align-items:end;background:#fff;padding:.6rem;border:1px solid #dde1e8}
.filters label{display:flex;flex-direction:column;font-size:.85em;gap:.15rem}
.notice{background:#fff;border-left:4px solid #8a94a6;padding:.5rem .8rem;margin:.6rem 0}
.notice.error{border-color:#c0392b}.current{font-weight:600}.dropped td{color:#8a94a6;text-decoration:line-through}
`

interface PageFrame {
  readonly title: string
  /** Shown in the header when someone is signed in. */
  readonly principal?: string | undefined
  /** Whether the sign-out button makes sense (a console cookie is in use). */
  readonly signedIn?: boolean
}

export function page (frame: PageFrame, body: Html): string {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${frame.title} · iceguard</title><style>${new Html(STYLE)}</style></head>
<body><header><strong>iceguard</strong><a href="/console/decisions">Decisions</a><a href="/console/tables">Tables</a>
${frame.principal === undefined ? '' : html`<span class="who">signed in as ${frame.principal}</span>`}
${frame.signedIn === true ? html`<form method="post" action="/console/logout"><button type="submit">Sign out</button></form>` : ''}
</header><main><h1>${frame.title}</h1>${body}</main></body></html>`.text
}
