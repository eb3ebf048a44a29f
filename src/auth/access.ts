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
  /**
   * The `Authorization` that may travel to the upstream catalog for reads and commits made as the
   * caller: an identity provider's JWT does, the static token never leaves iceguard.
   */
  readonly upstreamAuthorization: string | undefined
}

export function needsGrant (access: AdminAccess): Grant {
  return access === 'read' ? 'read' : 'write'
}

/** `write` includes `read`: a token that may change things may also look. */
export function allows (identity: AdminIdentity, access: AdminAccess): boolean {
  const need = needsGrant(access)
  return identity.grants.has(need) || (need === 'read' && identity.grants.has('write'))
}
