/** The sign-in page: a token pasted once, kept in an HttpOnly cookie for the console's pages. */
import { html, type Html } from './html.js'

export function loginBody (problem: string | undefined, jwt: boolean): Html {
  return html`${problem === undefined ? '' : html`<p class="notice error" role="alert">${problem}</p>`}
<form method="post" action="/console/login" class="filters">
<label>Admin token<input type="password" name="token" autocomplete="off" size="60" required></label>
<button type="submit">Sign in</button></form>
<p>Paste ${jwt ? 'an access token from your identity provider (it needs the read grant) or ' : ''}the admin token. It is kept in an HttpOnly cookie for this site's
<code>/console</code> pages only, and it is never shown again. Tools can send it as <code>Authorization: Bearer &lt;token&gt;</code> instead.</p>`
}

export function messageBody (message: string): Html {
  return html`<p class="notice error" role="alert">${message}</p>`
}
