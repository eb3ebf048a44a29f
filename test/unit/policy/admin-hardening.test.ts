/**
 * What a policy file and a break-glass token may not do: name a secret other than a webhook's as
 * a webhook's `secret-env`, or waive an Iceberg spec rule (refused at mint and at use, and never
 * lowered by `withOverride` whatever a token names).
 */
import { createHmac } from 'node:crypto'
import t from 'tap'
import { mintOverride, parsePolicy, resolvePolicy, verifyOverride, withOverride } from '../../../src/policy/index.js'
import { SPEC_RULES } from '../../../src/engine/rules/index.js'

const SECRET = 'admin-hardening-secret-012345'

/** A token signed with the secret but naming whatever rules the test wants: what mint refuses to make. */
function handSigned (rules: string[]): string {
  const now = Math.floor(Date.now() / 1000)
  const payload = { v: 1, id: 'handmade', table: 'db.orders', rules, reason: 'r', iat: now, exp: now + 600 }
  const body = `igo1.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`
  return `${body}.${createHmac('sha256', SECRET).update(body).digest('base64url')}`
}

t.test('a webhook secret-env may name only ICEGUARD_WEBHOOK_ variables', async t => {
  const policy = (env: string): string => `version: 1\ntables:\n  db.orders:\n    webhooks: [{ url: "https://hooks.example/x", secret-env: ${env} }]\n`
  t.ok(parsePolicy(policy('ICEGUARD_WEBHOOK_ORDERS'), 'p.yaml').policy, 'a webhook secret is accepted')
  t.ok(parsePolicy(policy('ICEGUARD_WEBHOOK_SECRET'), 'p.yaml').policy, 'so is the global webhook secret')
  for (const name of ['ICEGUARD_ADMIN_TOKEN', 'ICEGUARD_OVERRIDE_SECRET', 'PGPASSWORD', 'ICEGUARD_WEBHOOK_', 'MY_ICEGUARD_WEBHOOK_X']) {
    const { policy: loaded, errors } = parsePolicy(policy(name), 'p.yaml')
    t.equal(loaded, undefined, `${name} is refused at policy load`)
    t.match(errors.map(e => `${e.path} ${e.message}`).join('\n'), /secret-env.*ICEGUARD_WEBHOOK_/, 'the problem names the field and the allowed names')
  }
})

t.test('no override waives a spec rule: refused at mint, at use, and never lowered', async t => {
  t.ok(SPEC_RULES.length > 0)
  for (const rule of SPEC_RULES) {
    t.throws(() => mintOverride({ table: 'db.orders', rules: [rule.id], ttlSeconds: 60, reason: 'r', secret: SECRET }),
      new RegExp(`${rule.id} is an Iceberg spec rule`), `${rule.id}: refused at mint`)
  }
  t.throws(() => mintOverride({ table: 'db.orders', rules: ['COLUMN_NO_DROP', 'TYPE_PROMOTION_VALID'], ttlSeconds: 60, reason: 'r', secret: SECRET }),
    /TYPE_PROMOTION_VALID is an Iceberg spec rule/, 'one spec rule among others refuses the whole token')
  const used = verifyOverride(handSigned(['COLUMN_NO_DROP', 'TYPE_PROMOTION_VALID']), { table: 'db.orders', secret: SECRET })
  t.notOk(used.ok, 'a signed token naming a spec rule is refused at use')
  if (!used.ok) t.match(used.error, /cannot be used: TYPE_PROMOTION_VALID is an Iceberg spec rule/)
  t.ok(verifyOverride(handSigned(['COLUMN_NO_DROP']), { table: 'db.orders', secret: SECRET }).ok, 'the same token without it verifies')

  const settings = resolvePolicy(parsePolicy('version: 1\nrules:\n  COLUMN_NO_DROP: error\n', 'p.yaml').policy!, { namespace: ['db'], name: 'orders' })
  const lowered = withOverride(settings, ['COLUMN_NO_DROP', 'TYPE_PROMOTION_VALID'])
  t.equal(lowered.severity('COLUMN_NO_DROP'), 'warn', 'a platform rule is lowered')
  t.equal(lowered.severity('TYPE_PROMOTION_VALID'), settings.severity('TYPE_PROMOTION_VALID'), 'a spec rule keeps its severity')
  t.equal(settings.severity('TYPE_PROMOTION_VALID'), 'error')
})
