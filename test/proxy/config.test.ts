import test from 'ava';
import { ConfigError, loadConfig } from '../../src/proxy/config.ts';

test('defaults: loopback addresses, 64 KiB bodies, 100000 USDC max, 1 day tokens', (t) => {
  const config = loadConfig({ POOL_PROXY_DATA_DIR: '/tmp/pp-data' });
  t.is(config.host, '127.0.0.1');
  t.is(config.port, 8080);
  t.is(config.dataDir, '/tmp/pp-data');
  t.is(config.storeDir, '/tmp/pp-data/proxy-store');
  t.is(config.masterKeyFile, '/tmp/pp-data/master.key');
  t.is(config.ledger.rpcUrl, 'http://127.0.0.1:8000/rpc');
  t.is(config.ledger.sandboxInfoUrl, 'http://127.0.0.1:8000/sandbox/info');
  t.is(config.ledger.network, 'stellar:local');
  t.deepEqual(config.prover.addresses, ['127.0.0.1:8401']);
  t.is(config.limits.maxBodyBytes, 65536);
  t.is(config.limits.maxDeposit, 100_000n * 10_000_000n);
  t.is(config.limits.paymentCap, 10_000_000n);
  t.is(config.jwt.ttlSeconds, 86400);
  t.is(config.challengeTtlSeconds, 300);
  t.is(config.jwt.issuer, 'http://127.0.0.1:8080');
});

test('every value is taken from its environment variable', (t) => {
  const config = loadConfig({
    POOL_PROXY_HOST: '0.0.0.0',
    POOL_PROXY_PORT: '9090',
    POOL_PROXY_PUBLIC_URL: 'https://pool.example.com/',
    POOL_PROXY_RPC_URL: 'https://soroban-testnet.stellar.org',
    POOL_PROXY_NETWORK_PASSPHRASE: 'Test SDF Network ; September 2015',
    POOL_PROXY_PROVER_ADDRESSES: '10.0.0.1:50051, 10.0.0.2:50051',
    POOL_PROXY_MAX_DEPOSIT: '250.5',
    POOL_PROXY_RATE_LIMIT_IP_PER_SECOND: '0',
    POOL_PROXY_MASTER_KEY: 'AB'.repeat(32),
  });
  t.is(config.port, 9090);
  t.is(config.publicUrl, 'https://pool.example.com');
  t.is(config.jwt.issuer, 'https://pool.example.com');
  t.is(config.ledger.network, 'stellar:testnet');
  t.is(config.ledger.sandboxInfoUrl, '', 'no sandbox discovery on a real network');
  t.deepEqual(config.prover.addresses, ['10.0.0.1:50051', '10.0.0.2:50051']);
  t.is(config.limits.maxDeposit, 2_505_000_000n);
  t.is(config.rateLimit.ip.perSecond, 0);
  t.is(config.masterKeyHex, 'ab'.repeat(32));
});

test('invalid values name the variable', (t) => {
  const cases: Array<[Record<string, string>, RegExp]> = [
    [{ POOL_PROXY_PORT: '80a' }, /POOL_PROXY_PORT must be a whole number/],
    [{ POOL_PROXY_PORT: '70000' }, /POOL_PROXY_PORT must be between/],
    [{ POOL_PROXY_MASTER_KEY: 'abc' }, /POOL_PROXY_MASTER_KEY must be 64 hex/],
    [{ POOL_PROXY_RPC_URL: 'ftp://x' }, /POOL_PROXY_RPC_URL must use http/],
    [{ POOL_PROXY_RPC_URL: 'not a url' }, /POOL_PROXY_RPC_URL must be an absolute/],
    [{ POOL_PROXY_MAX_DEPOSIT: '-5' }, /POOL_PROXY_MAX_DEPOSIT/],
    [{ POOL_PROXY_CHALLENGE_TTL_SECONDS: '900' }, /between 10 and 300/],
    [{ POOL_PROXY_PROVER_ADDRESSES: 'nohost' }, /not host:port/],
  ];
  for (const [env, message] of cases) t.throws(() => loadConfig(env), { instanceOf: ConfigError, message });
});
