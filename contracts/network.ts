// The pool network the sandbox engine runs: its contracts (verifier, ASP membership and non-membership,
// pool; USDC is the classic asset USDC:admin and its built-in Stellar Asset Contract), the genesis that
// creates the well-known accounts (admin = USDC issuer, operator and pool wallet with USDC trustlines) with
// fresh keys and deploys the contracts, and friendbot's extras: every account it funds gets a USDC
// trustline, and `usdc=N` mints test USDC to it. `startPoolSandbox` starts the engine with it.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Asset, Keypair } from '@stellar/stellar-sdk';
import type { ContractIds } from '../src/ledger/contract-errors.ts';
import { addr, i128, u32, u256 } from '../src/sandbox/contract-api.ts';
import {
  type NetworkDefinition,
  Sandbox,
  type SandboxOptions,
  STARTING_BALANCE,
} from '../src/sandbox/index.ts';
import { instanceKey, trustlineKey } from '../src/sandbox/keys.ts';
import { aspMembership } from './asp-membership.ts';
import { aspNonMembership } from './asp-non-membership.ts';
import { pool } from './pool.ts';
import { verifier, vkeyToScVal } from './verifier.ts';

export const DEFAULT_VKEY_PATH = fileURLToPath(
  new URL('../build/circuits/policy_tx_2_2/verification_key.json', import.meta.url),
);

export const POOL_LEVELS = 20;
export const ASP_MEMBERSHIP_LEVELS = 20;
/** Largest single deposit the pool accepts: 1,000,000 USDC. */
export const MAX_DEPOSIT = 1_000_000n * 10_000_000n;
/** Policy AB: allowlist (1) + blocklist (2). */
export const POLICY_FLAGS = 3;
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

export type VerificationKeyInput = string | Record<string, unknown>;

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

function loadVkey(vkey: VerificationKeyInput): Record<string, unknown> {
  if (typeof vkey !== 'string') return vkey;
  try {
    return JSON.parse(readFileSync(vkey, 'utf8'));
  } catch (e) {
    throw new Error(
      `cannot read the verification key ${vkey} (run \`npm run build\` first): ${(e as Error).message}`,
    );
  }
}

/** The pool network; `vkey` is the circuit's snarkjs verification key (path or object) for the verifier. */
export function poolNetwork(
  opts: { vkey?: VerificationKeyInput } = {},
): NetworkDefinition<PoolNetworkInfo, PoolNetworkSecrets> {
  return {
    contracts: [verifier, aspMembership, aspNonMembership, pool],
    async genesis(ctx) {
      const vkey = vkeyToScVal(
        loadVkey(opts.vkey ?? DEFAULT_VKEY_PATH) as unknown as Parameters<typeof vkeyToScVal>[0],
      );
      const keys = { admin: Keypair.random(), operator: Keypair.random(), poolWallet: Keypair.random() };
      for (const kp of Object.values(keys)) ctx.createAccount(kp.publicKey(), STARTING_BALANCE);
      const admin = keys.admin.publicKey();
      // USDC is the classic asset USDC:admin; the operator and the pool wallet hold it in trustlines
      ctx.createTrustline(keys.operator.publicKey(), 'USDC', admin);
      ctx.createTrustline(keys.poolWallet.publicKey(), 'USDC', admin);
      const token = await ctx.deployStellarAsset('USDC', admin);
      const verifierId = await ctx.deployContract(admin, 'salt/verifier', verifier, [vkey]);
      const membership = await ctx.deployContract(admin, 'salt/asp_membership', aspMembership, [
        addr(admin),
        u32(ASP_MEMBERSHIP_LEVELS),
      ]);
      const nonMembership = await ctx.deployContract(admin, 'salt/asp_non_membership', aspNonMembership, [
        addr(admin),
      ]);
      const poolId = await ctx.deployContract(admin, 'salt/pool', pool, [
        addr(admin),
        addr(token),
        addr(verifierId),
        addr(membership),
        addr(nonMembership),
        u256(MAX_DEPOSIT),
        u32(POOL_LEVELS),
        u32(POLICY_FLAGS),
      ]);
      await ctx.invoke(admin, poolId, 'set_payout_wallet', [addr(keys.poolWallet.publicKey())]);
      return {
        info: {
          contracts: {
            token,
            pool: poolId,
            verifier: verifierId,
            asp_membership: membership,
            asp_non_membership: nonMembership,
          },
          accounts: { admin, operator: keys.operator.publicKey(), poolWallet: keys.poolWallet.publicKey() },
        },
        secrets: {
          admin: keys.admin.secret(),
          operator: keys.operator.secret(),
          poolWallet: keys.poolWallet.secret(),
        },
      };
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
        // USDC.mint(to, amount) sent by the issuer, credited to the account's trustline
        const tx = await ctx.signedCall(
          Keypair.fromSecret(ctx.secrets.admin),
          token,
          'mint',
          [addr(address), i128(amount)],
          {
            readOnly: [instanceKey(token)],
            readWrite: [trustlineKey(address, new Asset('USDC', issuer))],
          },
        );
        return { txs: [tx], reply };
      },
    },
  };
}

export type PoolSandbox = Sandbox<PoolNetworkInfo, PoolNetworkSecrets>;

/** The sandbox engine running the pool network. */
export function startPoolSandbox(
  opts: SandboxOptions & { vkey?: VerificationKeyInput } = {},
): Promise<PoolSandbox> {
  const { vkey, ...rest } = opts;
  return Sandbox.start({ ...rest, network: poolNetwork({ vkey }) });
}
