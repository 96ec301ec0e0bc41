// Money out needs the wallet, when its owner asks for it: on the real stack (sandbox ledger, prover daemon,
// proxy), a wallet's agent withdraws with its token alone until the owner's policy requires a fresh wallet
// signature and holds an address book; then a withdrawal without a signature, with a wrong one, one signed
// for another withdrawal or one replayed is refused and moves nothing, a destination outside the book is
// refused, a fresh signature goes through once, and turning the setting off needs the wallet too. A
// withdrawal to an account that cannot hold USDC is refused saying what to do, not with the host's text. Every
// request is well-formed and goes through PoolApi.
import { Keypair } from '#stellar-sdk';
import test from 'ava';
import type { AgentPolicyRequest, WalletConfirmationRequest, WithdrawRequest } from '../../src/api/types.ts';
import { type PoolApi, refused, walletApi } from './helpers/api.ts';
import { type Stack, startStack } from './helpers/stack.ts';
import { walletDeposit } from './helpers/wallet-deposit.ts';

let stack: Stack;
let wallet: Keypair;
/** The wallet's client (it owns AGENT). */
let own: PoolApi;
const AGENT = 'safe';
const dest = Keypair.random();
const other = Keypair.random();

const balance = async () => (await own.balance(AGENT)).balance;
const withdraw = (amount: string, destination: string, confirmation?: WithdrawRequest['confirmation']) =>
  own.withdraw({ agentId: AGENT, amount, destination, ...(confirmation !== undefined && { confirmation }) });
const putPolicy = (policy: AgentPolicyRequest) => own.setPolicy(AGENT, policy);
/** A confirmation message for `action`, signed by `signer` (the wallet unless told). */
async function confirm(action: WalletConfirmationRequest, signer = wallet) {
  const { message, nonce } = await own.walletConfirmation(AGENT, action);
  const signature = Buffer.from(signer.signMessage(message)).toString('base64');
  return { nonce, signature };
}

test.before(async () => {
  stack = await startStack();
  wallet = Keypair.random();
  await stack.fund(wallet.publicKey(), 5);
  for (const k of [dest, other]) await stack.fund(k.publicKey(), 1);
  own = walletApi(stack.proxy.url, await stack.login(wallet));
  await walletDeposit({
    api: own,
    wallet,
    networkPassphrase: stack.config.ledger.networkPassphrase,
    agentId: AGENT,
    amount: '1',
  });
});

test.after.always(async () => {
  await stack?.close();
});

test.serial(
  'a withdrawal to an account that cannot hold USDC says what to do, and moves nothing',
  async (t) => {
    const nowhere = Keypair.random().publicKey(); // never created: no account, no trustline
    const res = await refused(t, withdraw('0.1', nowhere), 'ledger_rejected');
    t.is(res.status, 422, res.detail);
    t.regex(res.detail, /cannot receive USDC: it has no USDC trustline .*Add the USDC asset/);
    t.notRegex(res.detail, /HostError|Error\(Contract/);
    t.is(await balance(), '1.0000000');
    t.is(await stack.usdcBalance(stack.sandbox.info.contracts.pool), 10_000_000n, 'books = chain');
  },
);

test.serial('without the setting a withdrawal needs the token only, as before', async (t) => {
  const res = await withdraw('0.1', other.publicKey());
  t.is(res.status, 'confirmed');
  t.is(await balance(), '0.9000000');
  t.like(await own.policy(AGENT), {
    requireWithdrawalSignature: false,
    withdrawalDestinations: [],
  });
});

test.serial('with it on, only a fresh signature of exactly this withdrawal, once, to the book', async (t) => {
  const on = await putPolicy({
    requireWithdrawalSignature: true,
    withdrawalDestinations: [dest.publicKey()],
  });
  t.like(on, { requireWithdrawalSignature: true, withdrawalDestinations: [dest.publicKey()] });
  const usdc = await stack.usdcBalance(dest.publicKey());
  const refusedWith = async (call: Promise<unknown>, code: string) => {
    const res = await refused(t, call, code);
    t.is(res.status, 403, res.detail);
    t.is(res.code, code);
    t.is(await balance(), '0.9000000', 'nothing moved');
  };
  await refusedWith(withdraw('0.1', dest.publicKey()), 'wallet_signature_required');
  // outside the book: refused before the wallet is asked to sign anything, and with any signature all the same
  const toOther = { withdraw: { amount: '0.1', destination: other.publicKey() } };
  await refusedWith(own.walletConfirmation(AGENT, toOther), 'policy_destination_not_allowed');
  await refusedWith(
    withdraw(
      '0.1',
      other.publicKey(),
      await confirm({ withdraw: { amount: '0.1', destination: dest.publicKey() } }),
    ),
    'policy_destination_not_allowed',
  );
  const forDest = { withdraw: { amount: '0.1', destination: dest.publicKey() } };
  // another key's signature: refused, and its nonce is spent
  const wrong = await confirm(forDest, Keypair.random());
  await refusedWith(withdraw('0.1', dest.publicKey(), wrong), 'wallet_signature_invalid');
  const spent = { nonce: wrong.nonce, signature: (await confirm(forDest)).signature };
  await refusedWith(withdraw('0.1', dest.publicKey(), spent), 'wallet_signature_invalid');
  // signed for another amount
  await refusedWith(withdraw('0.2', dest.publicKey(), await confirm(forDest)), 'wallet_signature_invalid');
  const good = await confirm(forDest);
  const ok = await withdraw('0.1', dest.publicKey(), good);
  t.is(ok.status, 'confirmed');
  t.is(await balance(), '0.8000000');
  t.is(await stack.usdcBalance(dest.publicKey()), usdc + 1_000_000n);
  const replay = await refused(t, withdraw('0.1', dest.publicKey(), good));
  t.is(replay.status, 403);
  t.is(replay.code, 'wallet_signature_invalid');
  t.is(await balance(), '0.8000000', 'the replay moved nothing');
});

test.serial(
  'loosening the settings needs the wallet too; the operator’s agents cannot ask for it',
  async (t) => {
    const off = { requireWithdrawalSignature: false, withdrawalDestinations: [] };
    const unsigned = await refused(t, putPolicy(off));
    t.is(unsigned.status, 403);
    t.is(unsigned.code, 'wallet_signature_required');
    const added = await refused(
      t,
      putPolicy({ withdrawalDestinations: [dest.publicKey(), other.publicKey()] }),
    );
    t.is(added.code, 'wallet_signature_required');
    t.like(await own.policy(AGENT), {
      requireWithdrawalSignature: true,
      withdrawalDestinations: [dest.publicKey()],
    });
    const mismatched = await refused(
      t,
      putPolicy({
        ...off,
        confirmation: await confirm({ policy: { ...off, requireWithdrawalSignature: true } }),
      }),
    );
    t.is(mismatched.code, 'wallet_signature_invalid');
    const ok = await putPolicy({ ...off, confirmation: await confirm({ policy: off }) });
    t.like(ok, { requireWithdrawalSignature: false, withdrawalDestinations: [] });

    const op = stack.operatorApi();
    t.is((await op.operatorDeposit({ agentId: 'op-safe', amount: '0.1' })).status, 'confirmed');
    const put = await refused(t, op.setPolicy('op-safe', { requireWithdrawalSignature: true }));
    t.is(put.status, 400);
    t.is(put.code, 'invalid_request');
  },
);
