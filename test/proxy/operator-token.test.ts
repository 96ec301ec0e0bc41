// The operator's credential and who a request comes from, as configured: the token file made on first start
// (mode 0600, `ppo_` + 43 characters), read back unchanged, refused when others may read it or when it holds
// something else (and then the proxy does not start); the loopback opt-in and the trusted proxies refuse
// values that are not what they must be.
import { chmodSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import {
  isOperatorToken,
  loadOperatorToken,
  OperatorCredential,
  readOperatorToken,
} from '../../src/proxy/auth/operator-token.ts';
import { ConfigError, loadConfig } from '../../src/proxy/config.ts';
import { startTestProxy } from './helpers/proxy.ts';

test('the token file: made once, mode 0600, read back unchanged; clients read it or find none', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'pp-operator-'));
  const file = join(dir, 'sub', 'operator.token');
  t.is(readOperatorToken(file), undefined, 'no file yet: a client finds no token');
  const token = loadOperatorToken(file);
  t.regex(token, /^ppo_[A-Za-z0-9_-]{43}$/);
  t.true(isOperatorToken(token));
  t.is(statSync(file).mode & 0o777, 0o600);
  t.is(loadOperatorToken(file), token, 'a second start keeps it');
  t.is(readOperatorToken(file), token);
  t.is(readFileSync(file, 'utf8').trim(), token);
  const credential = new OperatorCredential(token);
  t.true(credential.matches(token));
  t.false(credential.matches(`${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`));
  t.false(credential.matches('ppo_'));
});

test('a token file others may read, or holding something else, is refused; so is the start', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'pp-operator-'));
  const file = join(dir, 'operator.token');
  loadOperatorToken(file);
  chmodSync(file, 0o644);
  t.throws(() => loadOperatorToken(file), { message: /readable by others \(mode 644\); chmod 600 it/ });
  t.throws(() => readOperatorToken(file), { message: /readable by others/ });
  await t.throwsAsync(startTestProxy({ POOL_PROXY_DATA_DIR: dir }), { message: /readable by others/ });
  writeFileSync(file, 'not a token\n', { mode: 0o600 });
  chmodSync(file, 0o600);
  t.throws(() => loadOperatorToken(file), { message: /does not hold an operator token/ });
});

test('configuration: the token file, the loopback opt-in and the trusted proxies', (t) => {
  const config = loadConfig({ POOL_PROXY_DATA_DIR: '/tmp/pp-data' });
  t.deepEqual(config.operator, { tokenFile: '/tmp/pp-data/operator.token', loopback: false });
  t.deepEqual(config.trustedProxies, []);
  const set = loadConfig({
    POOL_PROXY_DATA_DIR: '/tmp/pp-data',
    POOL_PROXY_OPERATOR_TOKEN_FILE: 'secrets/op.token',
    POOL_PROXY_OPERATOR_LOOPBACK: 'true',
    POOL_PROXY_TRUSTED_PROXIES: '127.0.0.1, 10.0.0.0/8 ,::1,fd00::/8',
  });
  t.deepEqual(set.operator, { tokenFile: '/tmp/pp-data/secrets/op.token', loopback: true });
  t.deepEqual(set.trustedProxies, ['127.0.0.1', '10.0.0.0/8', '::1', 'fd00::/8']);
  for (const [name, value, message] of [
    ['POOL_PROXY_OPERATOR_LOOPBACK', 'yes', /POOL_PROXY_OPERATOR_LOOPBACK must be true or false/],
    ['POOL_PROXY_TRUSTED_PROXIES', 'proxy.internal', /"proxy.internal" is not an IP address or CIDR range/],
    ['POOL_PROXY_TRUSTED_PROXIES', '10.0.0.0/33', /"10.0.0.0\/33"/],
    ['POOL_PROXY_TRUSTED_PROXIES', '10.0.0.0/8/1', /"10.0.0.0\/8\/1"/],
  ] as const)
    t.throws(() => loadConfig({ [name]: value }), { instanceOf: ConfigError, message }, `${name}=${value}`);
});
