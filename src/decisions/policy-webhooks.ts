/** The webhook endpoints the policy names for a table: those of every scope that applies to it. */
import type { Policy } from '../policy/policy.js'
import { applicableScopes } from '../policy/resolve-policy.js'
import type { TableRef } from '../iceberg/rest-path.js'
import type { WebhookEndpoint } from './webhooks.js'

export function policyWebhooks (policy: () => Policy): (table: TableRef) => WebhookEndpoint[] {
  return (table) => applicableScopes(policy(), table)
    .flatMap(scope => scope.settings.webhooks ?? [])
}
