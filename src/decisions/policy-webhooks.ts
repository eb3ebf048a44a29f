/** The webhook endpoints the policy names for a table: those of every scope that applies to it. */
import type { Policy } from '../policy/policy.js'
import { applicableScopes } from '../policy/resolve-policy.js'
import type { TableName } from './decision.js'
import type { WebhookEndpoint } from './webhooks.js'

export function policyWebhooks (policy: () => Policy): (table: TableName) => WebhookEndpoint[] {
  return (table) => applicableScopes(policy(), { namespace: [...table.namespace], name: table.name })
    .flatMap(scope => scope.settings.webhooks ?? [])
}
