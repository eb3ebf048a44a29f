/** Operations endpoints: liveness and readiness. */
import { Type } from '@sinclair/typebox'

export const HealthSchema = Type.Object({
  status: Type.Literal('ok')
}, { $id: 'Health', additionalProperties: false })

export const ReadinessSchema = Type.Object({
  status: Type.Union([Type.Literal('ready'), Type.Literal('not-ready')]),
  upstream: Type.String({ description: 'What the upstream catalog answered to `GET /v1/config`.' })
}, { $id: 'Readiness', additionalProperties: false })
