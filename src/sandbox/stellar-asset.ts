// The built-in Stellar Asset Contract (the host's `contractExecutableStellarAsset`): a SEP-41 token for a
// classic asset `CODE:issuer` with 7 decimals, the SAC's storage layout and error codes, an admin (the
// issuer) who mints, `transfer` authorised by `from`, allowances. As on a real network, a G account's
// balance is its trustline (none → TrustlineMissingError #13; the issuer's supply is unlimited) and a
// contract's lives under ["Balance", address] → {amount, authorized, clawback} (`rpc.Server.getSACBalance`).

import { Asset, scValToNative, type xdr } from '@stellar/stellar-sdk';
import { StellarAssetError } from '../ledger/contract-errors.ts';
import { INT64_MAX, readTrustline, type TrustlineState, writeTrustline } from './accounts.ts';
import {
  addr,
  asAddress,
  asI128,
  asU32,
  bool,
  type ContractDefinition,
  type ContractEnv,
  expectArgs,
  i128,
  str,
  struct,
  sym,
  u32,
  vec,
  voidVal,
} from './contract-api.ts';
import { contractError } from './errors.ts';
import { AUTHORIZED_FLAG } from './keys.ts';
import type { Overlay } from './overlay.ts';

/** Stellar Asset Contract error codes (the ones this implementation raises). */
const TokenError = {
  NegativeAmount: StellarAssetError.NegativeAmountError,
  Allowance: StellarAssetError.AllowanceError,
  Balance: StellarAssetError.BalanceError,
  Overflow: StellarAssetError.OverflowError,
  TrustlineMissing: StellarAssetError.TrustlineMissingError,
  Deauthorized: StellarAssetError.BalanceDeauthorizedError,
} as const;

const I128_MAX = (1n << 127n) - 1n;
const METADATA = sym('METADATA');
const ADMIN = vec([sym('Admin')]);

const balanceKey = (id: string) => vec([sym('Balance'), addr(id)]);
const allowanceKey = (from: string, spender: string) =>
  vec([sym('Allowance'), struct({ from: addr(from), spender: addr(spender) })]);

const assets = new Map<string, Asset>();

/** The classic asset `CODE:issuer` this contract wraps (memoised: every balance access needs it). */
function assetOf(env: ContractEnv): Asset {
  const name = assetName(env);
  let asset = assets.get(name);
  if (!asset) {
    const [code, issuer] = name.split(':') as [string, string];
    asset = new Asset(code, issuer);
    assets.set(name, asset);
  }
  return asset;
}

/** A G account (addresses reaching the contract are valid strkeys: the first letter tells the kind). */
const isAccount = (id: string) => id.charCodeAt(0) === 71; // 'G'

/** A G account's trustline (the issuer has none: it holds an unlimited supply). */
function trustline(env: ContractEnv, id: string): TrustlineState {
  const entries = env.classicEntries;
  if (!entries) throw contractError(StellarAssetError.InternalError, 'classic entries are not available');
  const t = readTrustline(entries, id, assetOf(env));
  if (!t) throw contractError(TokenError.TrustlineMissing, `trustline entry is missing for account ${id}`);
  if ((t.flags & AUTHORIZED_FLAG) === 0)
    throw contractError(TokenError.Deauthorized, `balance of ${id} is deauthorized`);
  return t;
}

function readBalance(env: ContractEnv, id: string): bigint {
  if (isAccount(id)) return id === assetOf(env).getIssuer() ? INT64_MAX : trustline(env, id).balance;
  const v = env.persistent.get(balanceKey(id));
  if (!v) return 0n;
  return BigInt((scValToNative(v) as { amount: bigint }).amount);
}

function writeContractBalance(env: ContractEnv, id: string, amount: bigint): void {
  env.persistent.set(
    balanceKey(id),
    struct({ amount: i128(amount), authorized: bool(true), clawback: bool(false) }),
  );
}

function nonNegative(amount: bigint): void {
  if (amount < 0n) throw contractError(TokenError.NegativeAmount, 'negative amounts are not allowed');
}

/** Adds `amount` to `id`: a trustline (up to its limit), nothing for the issuer, or a contract balance. */
function credit(env: ContractEnv, id: string, amount: bigint): void {
  if (isAccount(id)) {
    if (id === assetOf(env).getIssuer()) return;
    const t = trustline(env, id);
    if (t.balance + amount > t.limit)
      throw contractError(TokenError.Balance, `the trustline of ${id} cannot hold ${amount} more`);
    writeTrustline(env.classicEntries as Overlay, id, assetOf(env), { ...t, balance: t.balance + amount });
    return;
  }
  const balance = readBalance(env, id);
  if (balance + amount > I128_MAX) throw contractError(TokenError.Overflow, 'balance overflow');
  writeContractBalance(env, id, balance + amount);
}

/** Takes `amount` from `id` (the issuer's supply is unlimited). */
function debit(env: ContractEnv, id: string, amount: bigint): void {
  if (isAccount(id) && id === assetOf(env).getIssuer()) return;
  const balance = readBalance(env, id);
  if (balance < amount)
    throw contractError(TokenError.Balance, `balance ${balance} is not sufficient to spend ${amount}`);
  if (isAccount(id)) {
    const t = trustline(env, id);
    writeTrustline(env.classicEntries as Overlay, id, assetOf(env), { ...t, balance: t.balance - amount });
  } else writeContractBalance(env, id, balance - amount);
}

function move(env: ContractEnv, from: string, to: string, amount: bigint): void {
  debit(env, from, amount);
  credit(env, to, amount);
}

const names = new WeakMap<ContractEnv, string>();

/** `CODE:issuer`, read once per invocation (the instance's metadata never changes). */
function assetName(env: ContractEnv): string {
  let name = names.get(env);
  if (name === undefined) {
    const meta = env.instance.get(METADATA);
    name = String((scValToNative(meta as xdr.ScVal) as { name: string }).name);
    names.set(env, name);
  }
  return name;
}

function admin(env: ContractEnv): string {
  return asAddress(env.instance.get(ADMIN) as xdr.ScVal);
}

function readAllowance(env: ContractEnv, from: string, spender: string): bigint {
  const v = env.temporary.get(allowanceKey(from, spender));
  if (!v) return 0n;
  const a = scValToNative(v) as { amount: bigint; expiration_ledger: number };
  return a.expiration_ledger < env.ledgerSequence ? 0n : BigInt(a.amount);
}

export const stellarAssetContract: ContractDefinition = {
  name: 'stellar-asset',
  /** (admin: Address, code: String) — the asset is `code:admin`, like a classic asset wrapped by a SAC. */
  construct(env, args) {
    expectArgs(args, 2, '__constructor');
    const issuer = asAddress(args[0] as xdr.ScVal, 'admin');
    const code = String((args[1] as xdr.ScVal).value);
    env.instance.set(ADMIN, addr(issuer));
    env.instance.set(
      METADATA,
      struct({ decimal: u32(7), name: str(`${code}:${issuer}`), symbol: str(code) }),
    );
  },
  functions: {
    decimals: (_env, args) => {
      expectArgs(args, 0, 'decimals');
      return u32(7);
    },
    name: (env, args) => {
      expectArgs(args, 0, 'name');
      return str(assetName(env));
    },
    symbol: (env, args) => {
      expectArgs(args, 0, 'symbol');
      return str(assetName(env).split(':')[0] as string);
    },
    admin: (env, args) => {
      expectArgs(args, 0, 'admin');
      return addr(admin(env));
    },
    balance: (env, args) => {
      expectArgs(args, 1, 'balance');
      return i128(readBalance(env, asAddress(args[0] as xdr.ScVal, 'id')));
    },
    transfer: (env, args) => {
      expectArgs(args, 3, 'transfer');
      const from = asAddress(args[0] as xdr.ScVal, 'from');
      const to = asAddress(args[1] as xdr.ScVal, 'to');
      const amount = asI128(args[2] as xdr.ScVal);
      nonNegative(amount);
      env.requireAuth(from);
      move(env, from, to, amount);
      env.emit([sym('transfer'), addr(from), addr(to), str(assetName(env))], i128(amount));
      return voidVal();
    },
    transfer_from: (env, args) => {
      expectArgs(args, 4, 'transfer_from');
      const spender = asAddress(args[0] as xdr.ScVal, 'spender');
      const from = asAddress(args[1] as xdr.ScVal, 'from');
      const to = asAddress(args[2] as xdr.ScVal, 'to');
      const amount = asI128(args[3] as xdr.ScVal);
      nonNegative(amount);
      env.requireAuth(spender);
      const allowed = readAllowance(env, from, spender);
      if (allowed < amount)
        throw contractError(TokenError.Allowance, `allowance ${allowed} is not sufficient`);
      const key = allowanceKey(from, spender);
      const current = scValToNative(env.temporary.get(key) as xdr.ScVal) as { expiration_ledger: number };
      env.temporary.set(
        key,
        struct({ amount: i128(allowed - amount), expiration_ledger: u32(current.expiration_ledger) }),
      );
      move(env, from, to, amount);
      env.emit([sym('transfer'), addr(from), addr(to), str(assetName(env))], i128(amount));
      return voidVal();
    },
    approve: (env, args) => {
      expectArgs(args, 4, 'approve');
      const from = asAddress(args[0] as xdr.ScVal, 'from');
      const spender = asAddress(args[1] as xdr.ScVal, 'spender');
      const amount = asI128(args[2] as xdr.ScVal);
      const expiration = asU32(args[3] as xdr.ScVal, 'expiration_ledger');
      nonNegative(amount);
      env.requireAuth(from);
      if (amount > 0n && expiration < env.ledgerSequence) {
        throw contractError(TokenError.Allowance, 'expiration_ledger is in the past');
      }
      env.temporary.set(
        allowanceKey(from, spender),
        struct({ amount: i128(amount), expiration_ledger: u32(expiration) }),
      );
      env.emit(
        [sym('approve'), addr(from), addr(spender), str(assetName(env))],
        vec([i128(amount), u32(expiration)]),
      );
      return voidVal();
    },
    allowance: (env, args) => {
      expectArgs(args, 2, 'allowance');
      return i128(
        readAllowance(
          env,
          asAddress(args[0] as xdr.ScVal, 'from'),
          asAddress(args[1] as xdr.ScVal, 'spender'),
        ),
      );
    },
    mint: (env, args) => {
      expectArgs(args, 2, 'mint');
      const to = asAddress(args[0] as xdr.ScVal, 'to');
      const amount = asI128(args[1] as xdr.ScVal);
      nonNegative(amount);
      env.requireAuth(admin(env));
      credit(env, to, amount);
      env.emit([sym('mint'), addr(to), str(assetName(env))], i128(amount));
      return voidVal();
    },
    burn: (env, args) => {
      expectArgs(args, 2, 'burn');
      const from = asAddress(args[0] as xdr.ScVal, 'from');
      const amount = asI128(args[1] as xdr.ScVal);
      nonNegative(amount);
      env.requireAuth(from);
      debit(env, from, amount);
      env.emit([sym('burn'), addr(from), str(assetName(env))], i128(amount));
      return voidVal();
    },
  },
};
