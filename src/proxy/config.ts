// Proxy configuration: every address, key and limit comes from an environment variable with a default
// (documented in docs/CONFIG.md). Invalid values stop the start with a message naming the variable.
import { STANDALONE_PASSPHRASE, x402Network } from '../ledger/networks.ts';
import { DEFAULT_PROVER_LISTEN, DEFAULT_PROXY_HOST, DEFAULT_PROXY_PORT } from '../listen.ts';
import { isIP } from 'node:net';
import { isAbsolute, join, resolve } from 'node:path';
import { parseConfigAmount } from '../api/amount.ts';
import { messageOf } from './domain/errors.ts';

export interface RateLimitConfig {
  /** Sustained requests per second; 0 disables the limit. */
  perSecond: number;
  /** Bucket size: requests allowed in a burst. */
  burst: number;
}

export interface LedgerConfig {
  rpcUrl: string;
  networkPassphrase: string;
  /** CAIP-2 style network id shown in challenges and /api/pool/info (stellar:local, stellar:testnet…). */
  network: string;
  /** Where to discover contract ids and genesis accounts of the embedded sandbox; empty = do not ask. */
  sandboxInfoUrl: string;
  poolContractId: string;
  tokenContractId: string;
  aspMembershipContractId: string;
  aspNonMembershipContractId: string;
  /** Secret seed (S…) of the operator account: relayer of withdrawals and funder of operator deposits. */
  operatorSecret: string;
  /** Secret seed of the ASP admin, which inserts agents' note keys into the allowlist. */
  aspAdminSecret: string;
  /** Public address of the pool wallet that pays x402 services (shown in /api/pool/info). */
  poolWallet: string;
  baseFee: number;
  txTimeoutSeconds: number;
  confirmTimeoutMs: number;
}

export interface ProxyConfig {
  host: string;
  port: number;
  dataDir: string;
  storeDir: string;
  /** PostgreSQL URL of a store shared by several proxies ('' = the LevelDB store in `storeDir`). */
  databaseUrl: string;
  /** The LevelDB directory of the pool's event archive (on PostgreSQL, its `pool_events` table instead). */
  eventArchiveDir: string;
  masterKeyHex: string;
  masterKeyFile: string;
  /** Public origin of the service; its host is the `domain` of login challenges. */
  publicUrl: string;
  jwt: { issuer: string; audience: string; ttlSeconds: number };
  challengeTtlSeconds: number;
  limits: {
    maxBodyBytes: number;
    maxDeposit: bigint;
    maxWithdraw: bigint;
    paymentCap: bigint;
    prepareTtlSeconds: number;
    /** Deposits one wallet may be preparing at once. */
    walletConcurrentPrepares: number;
    /** New agents (allowlist registrations) one wallet may create per hour. */
    walletNewAgentsPerHour: number;
  };
  /** When new agents' keys are inserted into the allowlist (services/asp-registrar.ts). */
  registration: RegistrationSchedule;
  rateLimit: { ip: RateLimitConfig; token: RateLimitConfig };
  /** Who acts as the operator (auth/operator-token.ts). */
  operator: OperatorAccess;
  /** Peers whose X-Forwarded-For names the client (addresses or CIDR ranges; http/client-address.ts). */
  trustedProxies: string[];
  /** Origins besides the public URL's that a browser request to /mcp may come from (src/mcp/http.ts). */
  mcpAllowedOrigins: string[];
  ledger: LedgerConfig;
  indexer: { startLedger: number; pollIntervalMs: number };
  /** How often unfinished operations are reconciled against the chain (also once at start). */
  reconcileIntervalMs: number;
  payments: PaymentsConfig;
  prover: { addresses: string[]; circuitId: string; timeoutMs: number };
}

export interface OperatorAccess {
  /** The file that holds the operator's token (created on first start). */
  tokenFile: string;
  /** Loopback callers without the token act as the operator too (single-host development only). */
  loopback: boolean;
}

export interface RegistrationSchedule {
  /** interval between registration slots (ms); slots fall on its multiples since the epoch */
  slotMs: number;
  /** shortest validity a prepared deposit is given (ms) */
  windowMs: number;
  /** most keys inserted in one slot */
  perSlot: number;
  /** longest a request is held waiting for a slot (ms); a longer wait answers 503 with Retry-After */
  holdMs: number;
}

export interface PaymentsConfig {
  /** Secret seed of the pool wallet, the G account whose USDC float pays x402 services ('' = payments off). */
  poolWalletSecret: string;
  /** How long a batch collects payments before it runs. */
  batchWindowMs: number;
  /** A batch this full starts before its window ends. */
  batchMax: number;
  /** Payments waiting across batches; more are refused with queue_full. */
  queueMax: number;
  /** Payments of one batch executing at once. */
  batchConcurrency: number;
  /** How long one payment may take once its batch runs (retries and the proof of a failure included). */
  payDeadlineMs: number;
  /** Mean interval between settlement rounds (± half of it, at random, whatever the payments). */
  settleIntervalMs: number;
  /** Shielded transfers in every settlement round: agents' settlements, padded with float-account transfers. */
  settleRoundSize: number;
  /** The pool wallet's float: refilled from the float account to `target` when below `low`, in whole `unit`s. */
  float: FloatConfig;
  /** `host[:port]` entries a payment may reach even though they resolve to private or loopback addresses. */
  allowedHosts: string[];
  /** Per-agent spending budgets (stroops; 0 = off). */
  budgetPerHour: bigint;
  budgetPerDay: bigint;
  /** Seconds per ledger used to set authorization expirations (0 = measured on the RPC). */
  ledgerSeconds: number;
  /** Shown in /api/pool/info: the local facilitator and the demo paid service, when running. */
  facilitatorUrl: string;
  demoServiceUrl: string;
}

export interface FloatConfig {
  /** stroops */
  target: bigint;
  low: bigint;
  unit: bigint;
  /** Mean interval between float checks (± half of it, at random). */
  refillIntervalMs: number;
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

export type Env = Record<string, string | undefined>;

function text(env: Env, name: string, fallback: string): string {
  const value = env[name];
  return value === undefined || value.trim() === '' ? fallback : value.trim();
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  if (!/^[0-9]+$/.test(raw.trim())) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const value = Number(raw.trim());
  if (value < min || value > max)
    throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

function registrationSchedule(env: Env): RegistrationSchedule {
  const slot = integer(env, 'POOL_PROXY_REGISTRATION_SLOT_SECONDS', 20, 2, 3600);
  const window = integer(env, 'POOL_PROXY_SIGNING_WINDOW_SECONDS', 15, 1, 3600);
  if (window >= slot) {
    throw new ConfigError(
      `POOL_PROXY_SIGNING_WINDOW_SECONDS (${window}) must be shorter than POOL_PROXY_REGISTRATION_SLOT_SECONDS (${slot})`,
    );
  }
  return {
    slotMs: slot * 1000,
    windowMs: window * 1000,
    perSlot: integer(env, 'POOL_PROXY_REGISTRATIONS_PER_SLOT', 16, 1, 1000),
    holdMs: integer(env, 'POOL_PROXY_REGISTRATION_HOLD_SECONDS', 30, 1, 300) * 1000,
  };
}

function decimal(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  if (!/^[0-9]+(\.[0-9]+)?$/.test(raw.trim()))
    throw new ConfigError(`${name} must be a number, got "${raw}"`);
  const value = Number(raw.trim());
  if (value < min || value > max)
    throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

function url(env: Env, name: string, fallback: string): string {
  const value = text(env, name, fallback);
  if (value === '') return value;
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new ConfigError(`${name} must be an absolute http(s) URL, got "${value}"`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new ConfigError(`${name} must use http or https, got "${value}"`);
  }
  return value.replace(/\/$/, '');
}

function amount(env: Env, name: string, fallback: string): bigint {
  try {
    return parseConfigAmount(text(env, name, fallback), name);
  } catch (error) {
    throw new ConfigError(messageOf(error));
  }
}

function floatConfig(env: Env): FloatConfig {
  const target = amount(env, 'POOL_PROXY_FLOAT_TARGET', '100');
  const low = amount(env, 'POOL_PROXY_FLOAT_LOW', '50');
  const unit = amount(env, 'POOL_PROXY_FLOAT_UNIT', '1');
  if (low > target) throw new ConfigError('POOL_PROXY_FLOAT_LOW must not be above POOL_PROXY_FLOAT_TARGET');
  if (unit > target) throw new ConfigError('POOL_PROXY_FLOAT_UNIT must not be above POOL_PROXY_FLOAT_TARGET');
  return {
    target,
    low,
    unit,
    refillIntervalMs: integer(env, 'POOL_PROXY_FLOAT_REFILL_INTERVAL_MS', 60_000, 100, 86_400_000),
  };
}

/** An amount that may be absent or 0 (meaning: off). */
function optionalAmount(env: Env, name: string): bigint {
  const value = text(env, name, '0');
  return /^0+(\.0+)?$/.test(value) ? 0n : amount(env, name, value);
}

function flag(env: Env, name: string): boolean {
  const value = text(env, name, 'false').toLowerCase();
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  throw new ConfigError(`${name} must be true or false, got "${env[name]}"`);
}

/** `address` or `address/prefix`, IPv4 or IPv6. */
function isAddressOrRange(entry: string): boolean {
  const [address, prefix, extra] = entry.split('/');
  const family = isIP(address ?? '');
  if (family === 0 || extra !== undefined) return false;
  if (prefix === undefined) return true;
  return /^[0-9]{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

/** POOL_PROXY_TRUSTED_PROXIES: comma-separated addresses or CIDR ranges. */
function trustedProxies(env: Env): string[] {
  const entries = text(env, 'POOL_PROXY_TRUSTED_PROXIES', '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  for (const entry of entries)
    if (!isAddressOrRange(entry))
      throw new ConfigError(
        `POOL_PROXY_TRUSTED_PROXIES: "${entry}" is not an IP address or CIDR range (e.g. 127.0.0.1, 10.0.0.0/8)`,
      );
  return entries;
}

/** Comma-separated http(s) origins (scheme, host and port only), each as a browser sends it in Origin. */
function origins(env: Env, name: string): string[] {
  const entries = text(env, name, '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  for (const entry of entries) {
    const parsed = URL.canParse(entry) ? new URL(entry) : undefined;
    if (parsed === undefined || !/^https?:$/.test(parsed.protocol) || parsed.origin !== entry)
      throw new ConfigError(`${name}: "${entry}" is not an origin such as https://app.example.com`);
  }
  return entries;
}

function rateLimit(env: Env, prefix: string, perSecond: number, burst: number): RateLimitConfig {
  return {
    perSecond: decimal(env, `${prefix}_PER_SECOND`, perSecond, 0, 1_000_000),
    burst: integer(env, `${prefix}_BURST`, burst, 1, 10_000_000),
  };
}

/** True for the "any address" forms of IPv4 and IPv6 (0.0.0.0, 0, ::, [::], ::0, 0:0:0:0:0:0:0:0…). */
export function isWildcardHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  if (bare === '') return true;
  let normalised: string;
  try {
    normalised = new URL(`http://${isIP(bare) === 6 ? `[${bare}]` : bare}/`).hostname;
  } catch {
    return false;
  }
  return ['0.0.0.0', '[::]', '[::ffff:0:0]'].includes(normalised);
}

/** POOL_PROXY_DATABASE_URL: empty, or a postgres:// URL naming a database. */
function databaseUrl(env: Env): string {
  const value = text(env, 'POOL_PROXY_DATABASE_URL', '');
  if (value === '') return value;
  let parsed: URL | undefined;
  try {
    parsed = new URL(value);
  } catch {
    parsed = undefined;
  }
  if (parsed === undefined || !/^postgres(ql)?:$/.test(parsed.protocol) || parsed.hostname === '')
    throw new ConfigError(
      'POOL_PROXY_DATABASE_URL must be a postgres://user:password@host:port/database URL',
    );
  return value;
}

/** Reads the configuration from `env` (normally process.env). Throws ConfigError on invalid values. */
export function loadConfig(env: Env = process.env): ProxyConfig {
  const host = text(env, 'POOL_PROXY_HOST', DEFAULT_PROXY_HOST);
  const port = integer(env, 'POOL_PROXY_PORT', DEFAULT_PROXY_PORT, 0, 65535);
  const dataDir = resolve(text(env, 'POOL_PROXY_DATA_DIR', './data'));
  const inData = (value: string) => (isAbsolute(value) ? value : join(dataDir, value));

  const masterKeyHex = text(env, 'POOL_PROXY_MASTER_KEY', '');
  if (masterKeyHex !== '' && !/^[0-9a-fA-F]{64}$/.test(masterKeyHex)) {
    throw new ConfigError('POOL_PROXY_MASTER_KEY must be 64 hex characters (32 bytes)');
  }

  if (text(env, 'POOL_PROXY_PUBLIC_URL', '') === '' && isWildcardHost(host)) {
    throw new ConfigError(
      `POOL_PROXY_HOST=${host} listens on every interface, so the proxy cannot know the address clients ` +
        'reach it at (login challenges would say "' +
        `${host}:${port} wants you to sign in"): set POOL_PROXY_PUBLIC_URL to that origin, ` +
        'e.g. https://pool.example.com, or listen on one address',
    );
  }
  const publicUrl = url(
    env,
    'POOL_PROXY_PUBLIC_URL',
    `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
  );
  const rpcUrl = url(env, 'POOL_PROXY_RPC_URL', 'http://127.0.0.1:8000/rpc');
  const networkPassphrase = text(env, 'POOL_PROXY_NETWORK_PASSPHRASE', STANDALONE_PASSPHRASE);
  const defaultNetwork = x402Network(networkPassphrase);
  const defaultInfo =
    networkPassphrase === STANDALONE_PASSPHRASE ? `${new URL(rpcUrl).origin}/sandbox/info` : '';

  const challengeTtlSeconds = integer(env, 'POOL_PROXY_CHALLENGE_TTL_SECONDS', 300, 10, 300);
  const proverAddresses = text(env, 'POOL_PROXY_PROVER_ADDRESSES', DEFAULT_PROVER_LISTEN)
    .split(',')
    .map((a) => a.trim())
    .filter((a) => a !== '');
  for (const address of proverAddresses) {
    if (!/^[A-Za-z0-9.\-[\]:]+:[0-9]{1,5}$/.test(address)) {
      throw new ConfigError(`POOL_PROXY_PROVER_ADDRESSES: "${address}" is not host:port`);
    }
  }

  return {
    host,
    port,
    dataDir,
    storeDir: inData(text(env, 'POOL_PROXY_STORE_DIR', 'proxy-store')),
    databaseUrl: databaseUrl(env),
    eventArchiveDir: inData(text(env, 'POOL_PROXY_EVENT_ARCHIVE_DIR', 'pool-events')),
    masterKeyHex: masterKeyHex.toLowerCase(),
    masterKeyFile: inData(text(env, 'POOL_PROXY_MASTER_KEY_FILE', 'master.key')),
    publicUrl,
    jwt: {
      issuer: text(env, 'POOL_PROXY_JWT_ISSUER', publicUrl),
      audience: text(env, 'POOL_PROXY_JWT_AUDIENCE', `${publicUrl}/api`),
      ttlSeconds: integer(env, 'POOL_PROXY_JWT_TTL_SECONDS', 86400, 60, 30 * 86400),
    },
    challengeTtlSeconds,
    limits: {
      maxBodyBytes: integer(env, 'POOL_PROXY_MAX_BODY_BYTES', 64 * 1024, 1024, 16 * 1024 * 1024),
      maxDeposit: amount(env, 'POOL_PROXY_MAX_DEPOSIT', '100000'),
      maxWithdraw: amount(env, 'POOL_PROXY_MAX_WITHDRAW', '100000'),
      paymentCap: amount(env, 'POOL_PROXY_PAYMENT_CAP', '1'),
      prepareTtlSeconds: integer(env, 'POOL_PROXY_PREPARE_TTL_SECONDS', 300, 10, 3600),
      walletConcurrentPrepares: integer(env, 'POOL_PROXY_WALLET_CONCURRENT_PREPARES', 2, 1, 100),
      walletNewAgentsPerHour: integer(env, 'POOL_PROXY_WALLET_NEW_AGENTS_PER_HOUR', 10, 1, 10_000),
    },
    registration: registrationSchedule(env),
    rateLimit: {
      ip: rateLimit(env, 'POOL_PROXY_RATE_LIMIT_IP', 100, 200),
      token: rateLimit(env, 'POOL_PROXY_RATE_LIMIT_TOKEN', 50, 100),
    },
    operator: {
      tokenFile: inData(text(env, 'POOL_PROXY_OPERATOR_TOKEN_FILE', 'operator.token')),
      loopback: flag(env, 'POOL_PROXY_OPERATOR_LOOPBACK'),
    },
    trustedProxies: trustedProxies(env),
    mcpAllowedOrigins: origins(env, 'POOL_PROXY_MCP_ALLOWED_ORIGINS'),
    ledger: {
      rpcUrl,
      networkPassphrase,
      network: text(env, 'POOL_PROXY_NETWORK', defaultNetwork),
      sandboxInfoUrl: url(env, 'POOL_PROXY_SANDBOX_INFO_URL', defaultInfo),
      poolContractId: text(env, 'POOL_PROXY_POOL_CONTRACT', ''),
      tokenContractId: text(env, 'POOL_PROXY_TOKEN_CONTRACT', ''),
      aspMembershipContractId: text(env, 'POOL_PROXY_ASP_MEMBERSHIP_CONTRACT', ''),
      aspNonMembershipContractId: text(env, 'POOL_PROXY_ASP_NON_MEMBERSHIP_CONTRACT', ''),
      operatorSecret: text(env, 'POOL_PROXY_OPERATOR_SECRET', ''),
      aspAdminSecret: text(env, 'POOL_PROXY_ASP_ADMIN_SECRET', ''),
      poolWallet: text(env, 'POOL_PROXY_POOL_WALLET', ''),
      baseFee: integer(env, 'POOL_PROXY_BASE_FEE', 100, 100, 100_000_000),
      txTimeoutSeconds: integer(env, 'POOL_PROXY_TX_TIMEOUT_SECONDS', 60, 10, 3600),
      confirmTimeoutMs: integer(env, 'POOL_PROXY_CONFIRM_TIMEOUT_MS', 60_000, 1000, 600_000),
    },
    reconcileIntervalMs: integer(env, 'POOL_PROXY_RECONCILE_INTERVAL_MS', 15_000, 100, 3_600_000),
    payments: {
      poolWalletSecret: text(env, 'POOL_PROXY_POOL_WALLET_SECRET', ''),
      batchWindowMs: integer(env, 'POOL_PROXY_BATCH_WINDOW_MS', 15_000, 10, 3_600_000),
      batchMax: integer(env, 'POOL_PROXY_BATCH_MAX', 1000, 1, 100_000),
      queueMax: integer(env, 'POOL_PROXY_PAYMENT_QUEUE_MAX', 10_000, 1, 1_000_000),
      batchConcurrency: integer(env, 'POOL_PROXY_BATCH_CONCURRENCY', 64, 1, 10_000),
      payDeadlineMs: integer(env, 'POOL_PROXY_PAY_DEADLINE_MS', 120_000, 10_000, 3_600_000),
      settleIntervalMs: integer(env, 'POOL_PROXY_SETTLE_INTERVAL_MS', 60_000, 100, 86_400_000),
      settleRoundSize: integer(env, 'POOL_PROXY_SETTLE_ROUND_SIZE', 8, 1, 64),
      float: floatConfig(env),
      allowedHosts: text(env, 'POOL_PROXY_PAY_ALLOWED_HOSTS', '')
        .split(',')
        .map((h) => h.trim())
        .filter((h) => h !== ''),
      budgetPerHour: optionalAmount(env, 'POOL_PROXY_AGENT_BUDGET_PER_HOUR'),
      budgetPerDay: optionalAmount(env, 'POOL_PROXY_AGENT_BUDGET_PER_DAY'),
      ledgerSeconds: integer(env, 'POOL_PROXY_X402_LEDGER_SECONDS', 0, 0, 600),
      facilitatorUrl: url(env, 'POOL_PROXY_X402_FACILITATOR_URL', ''),
      demoServiceUrl: url(env, 'POOL_PROXY_X402_DEMO_URL', ''),
    },
    indexer: {
      startLedger: integer(env, 'POOL_PROXY_INDEXER_START_LEDGER', 0, 0, 2 ** 32 - 1),
      pollIntervalMs: integer(env, 'POOL_PROXY_INDEXER_POLL_MS', 500, 50, 60_000),
    },
    prover: {
      addresses: proverAddresses,
      circuitId: text(env, 'POOL_PROXY_CIRCUIT_ID', 'policy_tx_2_2'),
      timeoutMs: integer(env, 'POOL_PROXY_PROVE_TIMEOUT_MS', 120_000, 1000, 3_600_000),
    },
  };
}
