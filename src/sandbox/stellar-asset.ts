// The built-in Stellar Asset Contract (the host's `contractExecutableStellarAsset`): a SEP-41 token for a
// classic asset `CODE:issuer` with 7 decimals, the SAC's storage layout and error codes, an admin (the
// issuer) who mints, `transfer` authorised by `from`, allowances. Balances live under
// ["Balance", address] → {amount, authorized, clawback}, so `rpc.Server.getSACBalance` reads them.

import { scValToNative, type xdr } from '@stellar/stellar-sdk';
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

/** Stellar Asset Contract error codes. */
export const TokenError = {
  NegativeAmount: 8,
  Allowance: 9,
  Balance: 10,
  Overflow: 12,
} as const;

const I128_MAX = (1n << 127n) - 1n;
const METADATA = sym('METADATA');
const ADMIN = vec([sym('Admin')]);

const balanceKey = (id: string) => vec([sym('Balance'), addr(id)]);
const allowanceKey = (from: string, spender: string) =>
  vec([sym('Allowance'), struct({ from: addr(from), spender: addr(spender) })]);

function readBalance(env: ContractEnv, id: string): bigint {
  const v = env.persistent.get(balanceKey(id));
  if (!v) return 0n;
  return BigInt((scValToNative(v) as { amount: bigint }).amount);
}

function writeBalance(env: ContractEnv, id: string, amount: bigint): void {
  env.persistent.set(
    balanceKey(id),
    struct({ amount: i128(amount), authorized: bool(true), clawback: bool(false) }),
  );
}

function nonNegative(amount: bigint): void {
  if (amount < 0n) throw contractError(TokenError.NegativeAmount, 'negative amounts are not allowed');
}

function move(env: ContractEnv, from: string, to: string, amount: bigint): void {
  const fromBalance = readBalance(env, from);
  if (fromBalance < amount)
    throw contractError(TokenError.Balance, `balance ${fromBalance} is not sufficient to spend ${amount}`);
  writeBalance(env, from, fromBalance - amount);
  const toBalance = readBalance(env, to);
  if (toBalance + amount > I128_MAX) throw contractError(TokenError.Overflow, 'balance overflow');
  writeBalance(env, to, toBalance + amount);
}

function assetName(env: ContractEnv): string {
  const meta = env.instance.get(METADATA);
  return String((scValToNative(meta as xdr.ScVal) as { name: string }).name);
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
      const balance = readBalance(env, to);
      if (balance + amount > I128_MAX) throw contractError(TokenError.Overflow, 'balance overflow');
      writeBalance(env, to, balance + amount);
      env.emit([sym('mint'), addr(to), str(assetName(env))], i128(amount));
      return voidVal();
    },
    burn: (env, args) => {
      expectArgs(args, 2, 'burn');
      const from = asAddress(args[0] as xdr.ScVal, 'from');
      const amount = asI128(args[1] as xdr.ScVal);
      nonNegative(amount);
      env.requireAuth(from);
      const balance = readBalance(env, from);
      if (balance < amount) throw contractError(TokenError.Balance, 'balance is not sufficient');
      writeBalance(env, from, balance - amount);
      env.emit([sym('burn'), addr(from), str(assetName(env))], i128(amount));
      return voidVal();
    },
  },
};
