// Over MCP, through the SDK's own Client and StreamableHTTPClientTransport with a wallet's token, on the real
// stack (sandbox ledger, prover daemon, proxy, the local x402 pair): `pool_pay` with `dryRun: true` answers as
// `POST /api/pay` with `dryRun` does (would pass with the quoted price, or the refusing rule) and pays and
// reserves nothing; `pool_withdraw`, when the owner's policy requires a wallet signature, says how to confirm
// (the wallet-confirmation flow) and then withdraws with the signed `confirmation` it is given.
import { Keypair } from '#stellar-sdk';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import test from 'ava';
import { type PoolApi, walletApi } from '../proxy/helpers/api.ts';
import { walletDeposit } from '../proxy/helpers/wallet-deposit.ts';
import { callTool, problem, structured } from './helpers.ts';
import { type PayStack, startPayStack } from './pay-stack.ts';

let pay: PayStack;
let wallet: Keypair;
let own: PoolApi;
let client: Client;
let demo: string;
const AGENT = 'mcp-dry';
const dest = Keypair.random();

const balance = async () => (await own.balance(AGENT)).balance;
const poolWalletUsdc = () => pay.stack.usdcBalance(pay.stack.sandbox.info.accounts.poolWallet);
const textOf = (result: { content: unknown[] }) =>
  (result.content as { type: string; text?: string }[]).map((c) => c.text ?? '').join('\n');

test.before(async () => {
  pay = await startPayStack();
  demo = pay.x402.demo.quoteUrl;
  wallet = Keypair.random();
  await pay.stack.fund(wallet.publicKey(), 5);
  await pay.stack.fund(dest.publicKey(), 1);
  const token = await pay.stack.login(wallet, pay.proxy.url);
  own = walletApi(pay.proxy.url, token);
  await walletDeposit({
    api: own,
    wallet,
    networkPassphrase: pay.stack.config.ledger.networkPassphrase,
    agentId: AGENT,
    amount: '1',
  });
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', pay.proxy.url), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  client = new Client({ name: 'dry-run-test', version: '1.0.0' });
  await client.connect(transport);
});

test.after.always(async () => {
  await client?.close();
  await pay?.close();
});

test.serial('pool_pay with dryRun answers as the REST dry run, and pays nothing', async (t) => {
  const before = { balance: await balance(), payments: await own.payments(99), usdc: await poolWalletUsdc() };
  const passing = await callTool(client, 'pool_pay', { url: demo, agentId: AGENT, dryRun: true });
  const answer = structured(t, passing);
  t.deepEqual(answer, await own.payDryRun({ agentId: AGENT, serviceUrl: demo }));
  t.like(answer, { dryRun: true, wouldPay: true, price: '0.0100000' });
  t.regex(textOf(passing), /nothing paid or reserved.*0\.0100000 USDC.*would pass/);

  await own.setPolicy(AGENT, { perPaymentCap: '0.005' });
  const refusing = await callTool(client, 'pool_pay', { url: demo, agentId: AGENT, dryRun: true });
  t.like(structured(t, refusing), {
    dryRun: true,
    wouldPay: false,
    price: '0.0100000',
    refusal: { code: 'policy_per_payment_cap', rule: 'perPaymentCap' },
  });
  t.regex(textOf(refusing), /would be refused: policy_per_payment_cap/);
  // and the real pool_pay is refused with that code
  const real = await callTool(client, 'pool_pay', { url: demo, agentId: AGENT });
  t.is(problem(t, real).code, 'policy_per_payment_cap');
  await own.setPolicy(AGENT, {});

  t.deepEqual(
    { balance: await balance(), payments: await own.payments(99), usdc: await poolWalletUsdc() },
    before,
    'no reservation, no payment, nothing moved on chain',
  );
});

test.serial('pool_pay refuses a dryRun that is not a boolean', async (t) => {
  const res = await callTool(client, 'pool_pay', { url: demo, agentId: AGENT, dryRun: 'yes' });
  t.true(res.isError);
  t.is(await balance(), '1.0000000');
});

test.serial('pool_withdraw says how to confirm with the wallet, then takes the confirmation', async (t) => {
  await own.setPolicy(AGENT, {
    requireWithdrawalSignature: true,
    withdrawalDestinations: [dest.publicKey()],
  });
  const args = { agentId: AGENT, amount: '0.1', destination: dest.publicKey() };
  const unconfirmed = await callTool(client, 'pool_withdraw', args);
  t.is(problem(t, unconfirmed).code, 'wallet_signature_required');
  const text = textOf(unconfirmed);
  t.true(text.includes(`POST /api/agents/${AGENT}/wallet-confirmation`), text);
  t.true(
    text.includes(JSON.stringify({ withdraw: { amount: '0.1000000', destination: dest.publicKey() } })),
    text,
  );
  t.regex(text, /confirmation \{"nonce"/);
  t.is(await balance(), '1.0000000', 'nothing withdrawn');

  // as the text says: the owner asks for the message, signs it with the wallet, the tool takes it
  const { message, nonce } = await own.walletConfirmation(AGENT, {
    withdraw: { amount: '0.1000000', destination: dest.publicKey() },
  });
  const signature = Buffer.from(wallet.signMessage(message)).toString('base64');
  const usdc = await pay.stack.usdcBalance(dest.publicKey());
  const done = await callTool(client, 'pool_withdraw', { ...args, confirmation: { nonce, signature } });
  t.like(structured(t, done), { status: 'confirmed', amount: '0.1000000' });
  t.is(await balance(), '0.9000000');
  t.is(await pay.stack.usdcBalance(dest.publicKey()), usdc + 1_000_000n);
});
