// Money out needs the wallet, when its owner asks for it: on the real stack (sandbox ledger, prover daemon,
// proxy), a wallet's agent withdraws with its token alone until the owner's policy requires a fresh wallet
// signature and holds an address book; then a withdrawal without a signature, with a wrong one, one signed
// for another withdrawal or one replayed is refused and moves nothing, a destination outside the book is
// refused, a fresh signature goes through once, and turning the setting off needs the wallet too.
import { walletApi } from './helpers/api.ts';
import { walletDeposit } from './helpers/wallet-deposit.ts';
import { Keypair } from '#stellar-sdk';
import test from 'ava';
import { type Stack, startStack } from './helpers/stack.ts';
import { getJson, postJson, rawRequest } from './helpers/http.ts';

let stack: Stack;
let wallet: Keypair;
let own: Record<string, string>;
const AGENT = 'safe';
const dest = Keypair.random();
const other = Keypair.random();

const url = (path: string) => `${stack.proxy.url}${path}`;
const balance = async () => (await getJson(url(`/api/balance/${AGENT}`), own)).json.balance as string;
const withdraw = (amount: string, destination: string, confirmation?: unknown) =>
  postJson(
    url('/api/withdraw'),
    { agentId: AGENT, amount, destination, ...(confirmation !== undefined && { confirmation }) },
    own,
  );
const putPolicy = (body: unknown, headers = own) =>
  rawRequest(url(`/api/agents/${AGENT}/policy`), {
    method: 'PUT',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  }).then((r) => ({ status: r.status, json: r.json }));
/** A confirmation message for `action`, signed by `signer` (the wallet unless told). */
async function confirm(action: Record<string, unknown>, signer = wallet) {
  const res = await postJson(url(`/api/agents/${AGENT}/wallet-confirmation`), action, own);
  if (res.status !== 200) throw new Error(`confirmation: ${res.text}`);
  const signature = Buffer.from(signer.signMessage(res.json.message)).toString('base64');
  return { nonce: res.json.nonce as string, signature };
}

test.before(async () => {
  stack = await startStack();
  wallet = Keypair.random();
  await stack.fund(wallet.publicKey(), 5);
  for (const k of [dest, other]) await stack.fund(k.publicKey(), 1);
  const token = await stack.login(wallet);
  own = { authorization: `Bearer ${token}` };
  await walletDeposit({
    api: walletApi(stack.proxy.url, token),
    wallet,
    networkPassphrase: stack.config.ledger.networkPassphrase,
    agentId: AGENT,
    amount: '1',
  });
});

test.after.always(async () => {
  await stack?.close();
});

test.serial('without the setting a withdrawal needs the token only, as before', async (t) => {
  const res = await withdraw('0.1', other.publicKey());
  t.is(res.status, 200, res.text);
  t.is(await balance(), '0.9000000');
  t.like((await getJson(url(`/api/agents/${AGENT}/policy`), own)).json, {
    requireWithdrawalSignature: false,
    withdrawalDestinations: [],
  });
});

test.serial('with it on, only a fresh signature of exactly this withdrawal, once, to the book', async (t) => {
  const on = await putPolicy({
    requireWithdrawalSignature: true,
    withdrawalDestinations: [dest.publicKey()],
  });
  t.is(on.status, 200, JSON.stringify(on.json));
  t.like(on.json, { requireWithdrawalSignature: true, withdrawalDestinations: [dest.publicKey()] });
  const usdc = await stack.usdcBalance(dest.publicKey());
  const refused = async (res: { status: number; json: { code: string } }, code: string) => {
    t.is(res.status, 403, JSON.stringify(res.json));
    t.is(res.json.code, code);
    t.is(await balance(), '0.9000000', 'nothing moved');
  };
  await refused(await withdraw('0.1', dest.publicKey()), 'wallet_signature_required');
  await refused(
    await withdraw(
      '0.1',
      other.publicKey(),
      await confirm({ withdraw: { amount: '0.1', destination: other.publicKey() } }),
    ),
    'policy_destination_not_allowed',
  );
  const forDest = { withdraw: { amount: '0.1', destination: dest.publicKey() } };
  // another key's signature: refused, and its nonce is spent
  const wrong = await confirm(forDest, Keypair.random());
  await refused(await withdraw('0.1', dest.publicKey(), wrong), 'wallet_signature_invalid');
  const spent = { nonce: wrong.nonce, signature: (await confirm(forDest)).signature };
  await refused(await withdraw('0.1', dest.publicKey(), spent), 'wallet_signature_invalid');
  // signed for another amount
  await refused(await withdraw('0.2', dest.publicKey(), await confirm(forDest)), 'wallet_signature_invalid');
  const good = await confirm(forDest);
  const ok = await withdraw('0.1', dest.publicKey(), good);
  t.is(ok.status, 200, ok.text);
  t.is(await balance(), '0.8000000');
  t.is(await stack.usdcBalance(dest.publicKey()), usdc + 1_000_000n);
  const replay = await withdraw('0.1', dest.publicKey(), good);
  t.is(replay.status, 403);
  t.is(replay.json.code, 'wallet_signature_invalid');
  t.is(await balance(), '0.8000000', 'the replay moved nothing');
});

test.serial(
  'loosening the settings needs the wallet too; the operator’s agents cannot ask for it',
  async (t) => {
    const off = { requireWithdrawalSignature: false, withdrawalDestinations: [] };
    const refused = await putPolicy(off);
    t.is(refused.status, 403);
    t.is(refused.json.code, 'wallet_signature_required');
    const added = await putPolicy({ withdrawalDestinations: [dest.publicKey(), other.publicKey()] });
    t.is(added.json.code, 'wallet_signature_required');
    t.like((await getJson(url(`/api/agents/${AGENT}/policy`), own)).json, {
      requireWithdrawalSignature: true,
      withdrawalDestinations: [dest.publicKey()],
    });
    const mismatched = await putPolicy({
      ...off,
      confirmation: await confirm({ withdrawalSettings: { ...off, requireWithdrawalSignature: true } }),
    });
    t.is(mismatched.json.code, 'wallet_signature_invalid');
    const ok = await putPolicy({ ...off, confirmation: await confirm({ withdrawalSettings: off }) });
    t.is(ok.status, 200, JSON.stringify(ok.json));
    t.like(ok.json, { requireWithdrawalSignature: false, withdrawalDestinations: [] });

    const operatorAgent = await postJson(
      url('/api/deposit'),
      { agentId: 'op-safe', amount: '0.1' },
      stack.operator,
    );
    t.is(operatorAgent.status, 200, operatorAgent.text);
    const put = await rawRequest(url('/api/agents/op-safe/policy'), {
      method: 'PUT',
      headers: { 'content-type': 'application/json', ...stack.operator },
      body: JSON.stringify({ requireWithdrawalSignature: true }),
    });
    t.is(put.status, 400);
    t.is(put.json.code, 'invalid_request');
  },
);
