/** The policy module's public surface: load, resolve, hold, and break-glass. */
export { parsePolicy, loadPolicyFile, loadPolicy } from './load-policy.js'
export { resolvePolicy } from './resolve-policy.js'
export { PolicyStore } from './policy-store.js'
export { PolicyError } from './policy-error.js'
export { presetPolicy } from './presets.js'
export type { Policy } from './policy.js'
export { parseContract, checkContract } from './contract.js'
export { mintOverride, verifyOverride, withOverride, parseTtl } from './override-token.js'
