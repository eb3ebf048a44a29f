/** Types for scripts/tap-plugins.mjs (a plain Node script, run before tsx is in play). */
export function builtSignature (source: string): Set<string> | undefined
export function needsBuild (signature: ReadonlySet<string> | undefined, configured: readonly string[]): boolean
export function buildLinksHere (root: string, testPackage: string, core: string): boolean
export function tapBuildIsStale (root: string): boolean
