// The pool network the sandbox engine runs: genesis creates the well-known accounts (admin = USDC issuer and
// the contracts' admin; operator and pool wallet with USDC trustlines) with fresh keys; the deployment is
// `deployPool`, the same code `pool-proxy contracts deploy` runs against testnet, sent through the sandbox's
// own RPC (USDC is the classic asset USDC:admin and its Stellar Asset Contract); friendbot's extras give
// every account it funds a USDC trustline, and `usdc=N` mints test USDC to it. `startPoolSandbox` starts the
// engine with it.
import { Keypair, nativeToScVal } from '#stellar-sdk';
import type { ContractIds } from '../ledger/contract-errors.ts';
import { type NetworkDefinition, Sandbox, type SandboxOptions, STARTING_BALANCE } from '../sandbox/index.ts';
import { readContractWasms } from './contract-wasm.ts';
import { DEFAULT_POOL_PARAMETERS, deployPool } from './pool-deployment.ts';
import { loadVerificationKey, type VerificationKeyInput } from './verification-key.ts';

/** Largest friendbot USDC grant, in whole USDC. */
const MAX_FRIENDBOT_USDC = 1_000_000_000n;

export interface PoolNetworkInfo {
  contracts: Required<ContractIds>;
  accounts: { admin: string; operator: string; poolWallet: string };
}

export interface PoolNetworkSecrets {
  admin: string;
  operator: string;
  poolWallet: string;
}

/** "12.5" → 125000000 stroops (7 decimals); undefined if not a valid non-negative amount. */
export function parseUsdc(text: string): bigint | undefined {
  const m = /^(\d{1,10})(?:\.(\d{1,7}))?$/.exec(text);
  if (!m) return undefined;
  return BigInt(m[1] as string) * 10_000_000n + BigInt((m[2] ?? '').padEnd(7, '0'));
}

/** Stroops → a USDC decimal with 7 places, the inverse of parseUsdc. */
export function formatUsdc(stroops: bigint): string {
  return `${stroops / 10_000_000n}.${(stroops % 10_000_000n).toString().padStart(7, '0')}`;
}

/** What a pool network is made with. */
export interface PoolNetworkOptions {
  /** the circuit's snarkjs verification key (path or object) for the verifier */
  vkey?: VerificationKeyInput;
  /** where the compiled contracts are (default build/contracts) */
  wasmDir?: string;
  /** leaves one pool commitment tree takes before the next opens (default 2^20: the whole tree) */
  treeCapacity?: number;
}

/** The pool network. */
export function poolNetwork(
  opts: PoolNetworkOptions = {},
): NetworkDefinition<PoolNetworkInfo, PoolNetworkSecrets> {
  return {
    genesis(ctx) {
      const keys = { admin: Keypair.random(), operator: Keypair.random(), poolWallet: Keypair.random() };
      for (const kp of Object.values(keys)) ctx.createAccount(kp.publicKey(), STARTING_BALANCE);
      const admin = keys.admin.publicKey();
      // USDC is the classic asset USDC:admin; the operator and the pool wallet hold it in trustlines
      ctx.createTrustline(keys.operator.publicKey(), 'USDC', admin);
      ctx.createTrustline(keys.poolWallet.publicKey(), 'USDC', admin);
      return {
        admin: keys.admin.secret(),
        operator: keys.operator.secret(),
        poolWallet: keys.poolWallet.secret(),
      };
    },
    async deploy(ctx, secrets) {
      // read before anything is sent, so a missing build stops the start with its own message
      const verificationKey = loadVerificationKey(opts.vkey);
      const wasms = readContractWasms(opts.wasmDir);
      const admin = Keypair.fromSecret(secrets.admin);
      const operator = Keypair.fromSecret(secrets.operator).publicKey();
      const poolWallet = Keypair.fromSecret(secrets.poolWallet).publicKey();
      const { contracts } = await deployPool({
        ledger: ctx.ledger,
        admin,
        poolWallet,
        token: { code: 'USDC', issuer: admin.publicKey() },
        verificationKey,
        wasms,
        parameters: {
          ...DEFAULT_POOL_PARAMETERS,
          treeCapacity: opts.treeCapacity ?? DEFAULT_POOL_PARAMETERS.treeCapacity,
        },
      });
      return { contracts, accounts: { admin: admin.publicKey(), operator, poolWallet } };
    },
    friendbot: {
      existsHint: 'ask for usdc=N to mint test USDC',
      parse(q) {
        const text = q.get('usdc');
        if (text === null) return { request: undefined };
        const amount = parseUsdc(text);
        if (amount === undefined) return 'usdc must be a non-negative amount with at most 7 decimals';
        if (amount > MAX_FRIENDBOT_USDC * 10_000_000n) return `usdc must be at most ${MAX_FRIENDBOT_USDC}`;
        return { request: amount === 0n ? undefined : amount };
      },
      async apply(ctx, address, amount: bigint | undefined) {
        const { token } = ctx.info.contracts;
        const issuer = ctx.info.accounts.admin;
        // every account friendbot funds can hold and receive USDC
        const trustline = ctx.createTrustline(address, 'USDC', issuer);
        // The amount as the proxy's API writes amounts: a USDC decimal with 7 places ("2.5000000").
        const reply: Record<string, unknown> = { usdc: formatUsdc(amount ?? 0n), trustline };
        if (amount === undefined) return { txs: [], reply };
        // USDC.mint(to, amount) sent by the issuer (the SAC's admin), credited to the account's trustline
        const tx = await ctx.invoke(Keypair.fromSecret(ctx.secrets.admin), token, 'mint', [
          nativeToScVal(address, { type: 'address' }),
          nativeToScVal(amount, { type: 'i128' }),
        ]);
        return { txs: [tx], reply };
      },
    },
  };
}

export type PoolSandbox = Sandbox<PoolNetworkInfo, PoolNetworkSecrets>;

/** The sandbox engine running the pool network. */
export function startPoolSandbox(opts: SandboxOptions & PoolNetworkOptions = {}): Promise<PoolSandbox> {
  const { vkey, wasmDir, treeCapacity, ...rest } = opts;
  return Sandbox.start({ ...rest, network: poolNetwork({ vkey, wasmDir, treeCapacity }) });
}
