// A proxy told to listen on every interface must be told its public origin: otherwise its login
// challenges would name "0.0.0.0:8080". Checked on the configuration and on the real `pool-proxy start`,
// which refuses before it starts anything.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { freeLoopbackPort } from '../../src/listen.ts';
import { ConfigError, isWildcardHost, loadConfig } from '../../src/proxy/config.ts';

const CLI = fileURLToPath(new URL('../../bin/pool-proxy.js', import.meta.url));

test('every spelling of the any-address is a wildcard; real addresses and names are not', (t) => {
  for (const host of ['0.0.0.0', '0', '::', '[::]', '::0', '0:0:0:0:0:0:0:0', '::ffff:0.0.0.0']) {
    t.true(isWildcardHost(host), host);
  }
  for (const host of ['127.0.0.1', '::1', '[::1]', 'localhost', 'pool.example.com', '10.0.0.1', '0.0.0.1']) {
    t.false(isWildcardHost(host), host);
  }
});

test('a wildcard host without POOL_PROXY_PUBLIC_URL is refused; with it, the public host is the domain', (t) => {
  for (const host of ['0.0.0.0', '::']) {
    const error = t.throws(() => loadConfig({ POOL_PROXY_HOST: host, POOL_PROXY_DATA_DIR: '/tmp/pp' }), {
      instanceOf: ConfigError,
    });
    t.regex(error!.message, /listens on every interface/);
    t.regex(error!.message, /set POOL_PROXY_PUBLIC_URL/);
  }
  const config = loadConfig({
    POOL_PROXY_HOST: '0.0.0.0',
    POOL_PROXY_PUBLIC_URL: 'https://pool.example.com',
    POOL_PROXY_DATA_DIR: '/tmp/pp',
  });
  t.is(config.host, '0.0.0.0');
  t.is(new URL(config.publicUrl).host, 'pool.example.com');
  t.is(loadConfig({ POOL_PROXY_HOST: '127.0.0.1', POOL_PROXY_DATA_DIR: '/tmp/pp' }).host, '127.0.0.1');
});

test('pool-proxy start on 0.0.0.0 without a public URL exits 1 with the reason, having started nothing', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'pp-wildcard-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const port = await freeLoopbackPort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    POOL_PROXY_HOST: '0.0.0.0',
    POOL_PROXY_PORT: String(port),
  };
  delete env.POOL_PROXY_PUBLIC_URL;
  const anyPort = ['--sandbox', '--prover', '--facilitator', '--demo'].flatMap((flag) => [
    flag,
    '127.0.0.1:0',
  ]);
  const child = spawn(process.execPath, [CLI, 'start', '--data-dir', dataDir, ...anyPort], { env });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const [code] = await once(child, 'exit');
  t.is(code, 1, output);
  t.regex(output, /POOL_PROXY_HOST=0\.0\.0\.0 listens on every interface/);
  t.regex(output, new RegExp(`0\\.0\\.0\\.0:${port} wants you to sign in`));
  t.false(existsSync(join(dataDir, 'sandbox')), 'no sandbox was started');
  t.deepEqual(readdirSync(dataDir), []);
});
