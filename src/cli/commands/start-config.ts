// What `pool-proxy start` runs with, read once from its flags and the environment before anything starts:
// which parts are embedded (the sandbox with the local x402 pair unless POOL_PROXY_RPC_URL names a ledger,
// the prover daemon unless POOL_PROXY_PROVER_ADDRESSES names daemons), each part's address and settings,
// and the environment the proxies start from. The parts that start add their addresses and keys to that
// environment through `proxyEnvironment`, never by changing it in place.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { POLICY_CIRCUIT, circuitArtifacts } from '../../circuit/policy-circuit.ts';
import { type ListenAddress, parseListen } from '../../listen.ts';
import { LOCAL_CHANNELS, localX402Env, type LocalX402Urls } from '../../x402/local-services.ts';
import { parseIntFlag, parsePassphrase, parseTreeCapacity } from '../flags.ts';
import { tlsListen } from './sandbox.ts';
import type { ListenOptions } from './start-listeners.ts';

type Env = Record<string, string | undefined>;

export interface StartOptions extends ListenOptions {
  dataDir: string;
  ledgerMs: string;
  circuits: string;
  networkPassphrase: string;
  tls?: string | boolean;
  build?: boolean;
  replicas: string;
  treeCapacity?: string;
}

/** The embedded sandbox and the local x402 facilitator and demo service that run on it. */
export interface SandboxPartConfig {
  listen: ListenAddress;
  /** its ledger's data directory; absent before the first start, when genesis runs */
  dir: string;
  ledgerMs: number;
  networkPassphrase: string;
  /** leaves one pool tree takes (used when genesis creates the pool) */
  treeCapacity?: number;
  tls?: { host: string; port: number; dir: string };
  facilitator: ListenAddress;
  demo: ListenAddress & { maxTimeoutSeconds: number };
  channelCount: number;
}

export interface StartConfig {
  build: boolean;
  replicas: string;
  circuitsDir: string;
  /** the environment every proxy starts from: the process's, with the data directory */
  env: Env;
  /** absent when POOL_PROXY_RPC_URL names a ledger */
  sandbox?: SandboxPartConfig;
  /** the embedded prover daemon's address; absent when POOL_PROXY_PROVER_ADDRESSES names daemons */
  prover?: string;
}

/** The environment every proxy starts from: the process's, with the data directory. */
export function startEnvironment(opts: StartOptions, processEnv: Env): Env {
  return { ...processEnv, POOL_PROXY_DATA_DIR: resolve(opts.dataDir) };
}

/**
 * Reads the flags and the environment once (after the address check, which reads only the addresses); a
 * bad value is an error here, before anything starts.
 */
export function readStartConfig(opts: StartOptions, env: Env): StartConfig {
  const dataDir = resolve(opts.dataDir);
  // checked even when a real RPC is named (the proxy compares it with the RPC's own)
  const networkPassphrase = parsePassphrase(opts.networkPassphrase);
  return {
    build: opts.build === true,
    replicas: opts.replicas,
    circuitsDir: opts.circuits,
    env,
    sandbox: env.POOL_PROXY_RPC_URL ? undefined : sandboxPart(opts, env, dataDir, networkPassphrase),
    prover: env.POOL_PROXY_PROVER_ADDRESSES ? undefined : opts.prover,
  };
}

function sandboxPart(
  opts: StartOptions,
  env: Env,
  dataDir: string,
  networkPassphrase: string,
): SandboxPartConfig {
  const listen = parseListen(opts.sandbox, '--sandbox');
  const ledgerMs = Number(opts.ledgerMs);
  if (!Number.isInteger(ledgerMs) || ledgerMs < 1) throw new Error(`--ledger-ms must be a positive integer`);
  const tlsAt = tlsListen(opts.tls, listen.host, listen.port);
  return {
    listen,
    dir: join(dataDir, 'sandbox'),
    ledgerMs,
    networkPassphrase,
    ...(opts.treeCapacity !== undefined && { treeCapacity: parseTreeCapacity(opts.treeCapacity) }),
    ...(tlsAt && { tls: { ...tlsAt, dir: join(dataDir, 'tls') } }),
    facilitator: parseListen(opts.facilitator, '--facilitator'),
    demo: {
      ...parseListen(opts.demo, '--demo'),
      maxTimeoutSeconds: parseIntFlag(
        'POOL_PROXY_DEMO_MAX_TIMEOUT_SECONDS',
        env.POOL_PROXY_DEMO_MAX_TIMEOUT_SECONDS ?? '60',
        5,
        3600,
      ),
    },
    channelCount: parseIntFlag(
      'POOL_PROXY_FACILITATOR_CHANNELS',
      env.POOL_PROXY_FACILITATOR_CHANNELS ?? String(LOCAL_CHANNELS),
      1,
      1024,
    ),
  };
}

/** The policy circuit's key and wasm in the circuits folder, after the build made them. */
export function requireCircuitArtifacts(circuitsDir: string): ReturnType<typeof circuitArtifacts> {
  const artifacts = circuitArtifacts(POLICY_CIRCUIT.id, circuitsDir);
  if (!existsSync(artifacts.zkey) || !existsSync(artifacts.wasm)) {
    throw new Error(`no proving key in ${artifacts.dir}: run \`npm run build\` first`);
  }
  return artifacts;
}

/** What the embedded sandbox tells the proxies: its RPC, passphrase and info URL, and the keys it made. */
export interface SandboxSettings {
  rpcUrl: string;
  url: string;
  networkPassphrase: string;
  secrets: { operator: string; admin: string; poolWallet: string };
}

/**
 * The proxies' environment once the embedded parts run: the sandbox's RPC and passphrase replace what the
 * environment says, while a key or info URL the environment already names is kept; the local x402 pair
 * and the embedded daemon's address are added.
 */
export function proxyEnvironment(
  base: Env,
  parts: { sandbox?: SandboxSettings; x402?: LocalX402Urls; proverAddress?: string },
): Env {
  const env: Env = { ...base };
  const { sandbox, x402, proverAddress } = parts;
  if (sandbox) {
    env.POOL_PROXY_RPC_URL = sandbox.rpcUrl;
    env.POOL_PROXY_NETWORK_PASSPHRASE = sandbox.networkPassphrase;
    env.POOL_PROXY_SANDBOX_INFO_URL ||= `${sandbox.url}/sandbox/info`;
    env.POOL_PROXY_OPERATOR_SECRET ||= sandbox.secrets.operator;
    env.POOL_PROXY_ASP_ADMIN_SECRET ||= sandbox.secrets.admin;
    env.POOL_PROXY_POOL_WALLET_SECRET ||= sandbox.secrets.poolWallet;
  }
  if (x402) Object.assign(env, localX402Env(x402, env.POOL_PROXY_PAY_ALLOWED_HOSTS));
  if (proverAddress !== undefined) env.POOL_PROXY_PROVER_ADDRESSES = proverAddress;
  return env;
}
