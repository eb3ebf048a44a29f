/**
 * What an admin endpoint asks of its caller, and what a verified caller may do.
 *
 * - `read`: looks only. Open while no admin authentication is configured (as the catalog's own
 *   reads are), otherwise any verified caller with the read or write grant.
 * - `commit`: writes a table through the gate as the caller. Open while nothing is configured (the
 *   catalog's own authorization decides), otherwise the write grant.
 * - `write`: changes iceguard's own state (policy reload, override records). Refused while nothing
 *   is configured, otherwise the write grant.
 */
export type AdminAccess = 'read' | 'commit' | 'write'

export type Grant = 'read' | 'write'

export interface AdminIdentity {
  readonly kind: 'static-token' | 'jwt'
  /** Non-secret name of the caller: the JWT `sub`, or `admin-token`. */
  readonly principal: string
  readonly grants: ReadonlySet<Grant>
}

/**
 * The principal recorded for what a verified admin caller does (decisions, override records):
 * `sub:<subject>` for a JWT iceguard verified, `admin-token` for the static token. Principals that
 * iceguard only read from a request and never verified are spelled apart (src/audit/principal.ts).
 */
export function adminPrincipal (identity: AdminIdentity): string {
  return identity.kind === 'jwt' ? `sub:${identity.principal}` : identity.principal
}

export function needsGrant (access: AdminAccess): Grant {
  return access === 'read' ? 'read' : 'write'
}

/** `write` includes `read`: a token that may change things may also look. */
export function allows (identity: AdminIdentity, access: AdminAccess): boolean {
  const need = needsGrant(access)
  return identity.grants.has(need) || (need === 'read' && identity.grants.has('write'))
}
