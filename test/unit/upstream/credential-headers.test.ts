/**
 * iceguard's own credentials are dropped from every request header list sent upstream: the admin
 * token's header, the console cookie (other cookies kept byte for byte), and an `Authorization`
 * carrying the static admin token (any other `Authorization` kept).
 */
import t from 'tap'
import { forwardRequestHeaders } from '../../../src/upstream/headers.js'
import { carriesStaticToken } from '../../../src/auth/static-token.js'
import { withoutConsoleCookie } from '../../../src/auth/credential-names.js'

const TOKEN = 'static-admin-token-0123456789'

t.test('carriesStaticToken', async t => {
  t.ok(carriesStaticToken(TOKEN, `Bearer ${TOKEN}`))
  t.ok(carriesStaticToken(TOKEN, `bearer  ${TOKEN} `), 'scheme in any case, extra spaces')
  t.notOk(carriesStaticToken(TOKEN, `Bearer ${TOKEN}x`), 'longer')
  t.notOk(carriesStaticToken(TOKEN, `Bearer ${TOKEN.slice(1)}`), 'shorter')
  t.notOk(carriesStaticToken(TOKEN, `Bearer ${TOKEN.replace('0', '1')}`), 'same length, other token')
  t.notOk(carriesStaticToken(TOKEN, `Basic ${TOKEN}`), 'another scheme')
  t.notOk(carriesStaticToken(TOKEN, 'Bearer catalog-token'))
})

t.test('withoutConsoleCookie', async t => {
  t.equal(withoutConsoleCookie('a=1; iceguard_console=abc; b=2'), 'a=1; b=2')
  t.equal(withoutConsoleCookie('iceguard_console=abc'), undefined, 'nothing left: no header')
  t.equal(withoutConsoleCookie('a=1;b=2'), 'a=1;b=2', 'a header without it is kept byte for byte')
  t.equal(withoutConsoleCookie('not_iceguard_console=1; x=2'), 'not_iceguard_console=1; x=2', 'a cookie whose name only contains it is kept')
})

t.test('forwardRequestHeaders drops iceguard\'s credentials', async t => {
  const raw = ['Authorization', `Bearer ${TOKEN}`, 'X-Iceguard-Admin-Token', TOKEN, 'Cookie', `theme=dark; iceguard_console=${TOKEN}`, 'Accept', 'application/json']
  const out = forwardRequestHeaders(raw, undefined, true, TOKEN)
  t.same(out, ['cookie', 'theme=dark', 'accept', 'application/json'])
  t.notOk(out.join('\n').includes(TOKEN), 'the token appears nowhere')
  const catalog = forwardRequestHeaders(['Authorization', 'Bearer catalog-token', 'X-Iceguard-Admin-Token', TOKEN], undefined, true, TOKEN)
  t.same(catalog, ['authorization', 'Bearer catalog-token'], 'the catalog credential travels')
  t.same(forwardRequestHeaders(['Authorization', `Bearer ${TOKEN}`], undefined, true), ['authorization', `Bearer ${TOKEN}`],
    'without a configured static token there is nothing to withhold')
})
