// Our facilitator and the demo service on `stellar:local` (the standalone sandbox), end to end over real HTTP:
// quote → sign → send → confirmTransfer for GET and POST, several concurrent settlements spread over several
// channel accounts, one authorization settled once even when sent twice at the same time, the same refusals
// as the official facilitator (replay, wrong amount, wrong payTo, expired, bad signature), a payment never sent
// to a URL other than the one it was signed for, and bad requests.
import { Keypair, TransactionBuilder, type rpc } from '#stellar-sdk';
import { HTTPFacilitatorClient } from '@x402/core/server';
import test from 'ava';
import { STANDALONE_PASSPHRASE } from '../../src/ledger/networks.ts';
import type { PoolSandbox } from '../../src/deploy/sandbox-network.ts';
import { startDemoService, type DemoServiceHandle } from '../../src/x402/demo-service.ts';
import {
  ensureChannelAccounts,
  startFacilitator,
  type FacilitatorHandle,
} from '../../src/x402/facilitator/index.ts';
import {
  confirmTransfer,
  findAuthorizationUse,
  isX402Error,
  quote,
  send,
  sign,
  type PayerNetwork,
  type SignedPayment,
} from '../../src/x402/index.ts';
import {
  fund,
  newAccount,
  startSandbox,
  tokenBalance,
  waitPastLedger,
  withBadSignature,
  withV2Credentials,
  signExpiringSoon,
} from './helpers.ts';

const PRICE = 100_000n;
let sandbox: PoolSandbox;
let server: rpc.Server;
let token: string;
let poolWallet: Keypair;
let payTo: string;
let channels: Keypair[];
let facilitator: FacilitatorHandle;
let demo: DemoServiceHandle;
let payer: PayerNetwork;
let client: HTTPFacilitatorClient;

test.before(async () => {
  ({ sandbox, server } = await startSandbox({ ledgerMs: 200 }));
  token = sandbox.info.contracts.token;
  poolWallet = Keypair.fromSecret(sandbox.secrets().poolWallet);
  await fund(sandbox, poolWallet.publicKey(), '100');
  payTo = (await newAccount(sandbox)).publicKey();
  channels = [Keypair.random(), Keypair.random(), Keypair.random()];
  await ensureChannelAccounts(sandbox.rpcUrl, channels);
  facilitator = await startFacilitator({
    port: 0,
    rpcUrl: sandbox.rpcUrl,
    networkPassphrase: STANDALONE_PASSPHRASE,
    channels,
    pollMs: 50,
  });
  demo = await startDemoService({
    port: 0,
    facilitator: facilitator.url,
    network: facilitator.network,
    asset: token,
    payTo,
  });
  payer = { rpcUrl: sandbox.rpcUrl, networkPassphrase: STANDALONE_PASSPHRASE, asset: token };
  client = new HTTPFacilitatorClient({ url: facilitator.url });
});

test.after.always(async () => {
  await demo?.close();
  await facilitator?.close();
  await sandbox?.close();
});

// generous: the machine may be loaded, and the time cap has its own test
const fetchOpts = () => ({ allowedHosts: [new URL(demo.url).host], timeoutMs: 120_000 });
const balance = (who: string) => tokenBalance(server, STANDALONE_PASSPHRASE, token, who);

async function pay(request: {
  url: string;
  method?: string;
  body?: unknown;
  headers?: Record<string, string>;
}) {
  const q = await quote(request, payer, fetchOpts());
  const signed = await sign(q, poolWallet, payer);
  const res = await send(request, signed, fetchOpts());
  return { q, signed, res };
}

test.serial('GET /supported lists stellar:local and the channel accounts', async (t) => {
  const supported = await client.getSupported();
  t.deepEqual(supported.kinds, [
    { x402Version: 2, scheme: 'exact', network: 'stellar:local', extra: { areFeesSponsored: true } },
  ]);
  t.deepEqual(supported.signers['stellar:*']?.sort(), channels.map((c) => c.publicKey()).sort());
});

test.serial(
  'pay the demo service: quote → sign → send → confirmTransfer, the transfer is on chain',
  async (t) => {
    const before = [await balance(poolWallet.publicKey()), await balance(payTo)];
    const { q, signed, res } = await pay({ url: demo.quoteUrl });
    t.is(q.amount, PRICE);
    t.is(q.network, 'stellar:local');
    t.is(res.status, 200);
    t.is(res.contentType, 'application/json');
    t.truthy(JSON.parse(res.body.toString()).quote);
    t.true(res.settlement?.success);
    const confirmed = await confirmTransfer(server, res.settlement!.transaction, signed.record);
    t.deepEqual(
      [await balance(poolWallet.publicKey()), await balance(payTo)],
      [before[0]! - PRICE, before[1]! + PRICE],
    );
    t.like(await findAuthorizationUse(sandbox.rpcUrl, signed.record), {
      state: 'used',
      txHash: confirmed.txHash,
    });
    // the transaction was sent by a channel account, never by the payer
    const tx = await server.getTransaction(confirmed.txHash);
    const envelope = TransactionBuilder.fromXDR(
      (tx as rpc.Api.GetSuccessfulTransactionResponse).envelopeXdr.toXDR('base64'),
      STANDALONE_PASSPHRASE,
    ) as { source: string };
    t.true(channels.map((c) => c.publicKey()).includes(envelope.source));
  },
);

test.serial('POST /demo/echo forwards the method, the JSON body and the chosen header', async (t) => {
  const { res } = await pay({ url: demo.echoUrl, method: 'POST', body: { hello: 'world', n: [1, 2] } });
  t.is(res.status, 200);
  t.deepEqual(JSON.parse(res.body.toString()), {
    echo: { hello: 'world', n: [1, 2] },
    contentType: 'application/json',
  });
  t.true(res.settlement?.success);
});

test.serial('a service that fails after verification is not paid', async (t) => {
  const before = await balance(poolWallet.publicKey());
  const request = {
    url: demo.echoUrl,
    method: 'POST',
    body: 'not json',
    headers: { 'content-type': 'text/plain' },
  };
  const q = await quote(request, payer, fetchOpts());
  const signed = await sign(q, poolWallet, payer);
  const res = await send(request, signed, fetchOpts());
  t.is(res.status, 400);
  t.is(res.settlement, undefined);
  t.is(await balance(poolWallet.publicKey()), before);
  t.like(await findAuthorizationUse(server, signed.record), { state: 'pending' });
});

test.serial('a payment signed for one URL is never sent to another', async (t) => {
  const before = await balance(poolWallet.publicKey());
  const q = await quote({ url: demo.quoteUrl }, payer, fetchOpts());
  const signed = await sign(q, poolWallet, payer);
  for (const url of [demo.echoUrl, `${demo.quoteUrl}?x=1`, `${demo.url}/health`]) {
    const error = await t.throwsAsync(send({ url }, signed, fetchOpts()));
    t.true(isX402Error(error, 'bad_url'), `${url}: ${String(error)}`);
  }
  t.is(await balance(poolWallet.publicKey()), before);
  t.like(await findAuthorizationUse(server, signed.record), { state: 'pending' });
  // the URL it was signed for gets it (another spelling of that URL is that URL)
  const res = await send({ url: demo.quoteUrl.replace('/demo/', '/x/../demo/') }, signed, fetchOpts());
  t.true(res.settlement?.success);
  t.is(await balance(poolWallet.publicKey()), before - PRICE);
});

test.serial('concurrent settlements use several channel accounts and all confirm', async (t) => {
  const before = await balance(payTo);
  const n = 6;
  const signed: SignedPayment[] = [];
  for (let i = 0; i < n; i++)
    signed.push(await sign(await quote({ url: demo.quoteUrl }, payer, fetchOpts()), poolWallet, payer));
  const results = await Promise.all(signed.map((s) => send({ url: demo.quoteUrl }, s, fetchOpts())));
  const hashes = results.map((r) => r.settlement?.transaction);
  t.true(results.every((r) => r.status === 200 && r.settlement?.success));
  t.is(new Set(hashes).size, n);
  const sources = new Set<string>();
  for (const [i, r] of results.entries()) {
    await confirmTransfer(server, r.settlement!.transaction, signed[i]!.record);
    const tx = (await server.getTransaction(
      r.settlement!.transaction,
    )) as rpc.Api.GetSuccessfulTransactionResponse;
    sources.add(
      (
        TransactionBuilder.fromXDR(tx.envelopeXdr.toXDR('base64'), STANDALONE_PASSPHRASE) as {
          source: string;
        }
      ).source,
    );
  }
  t.true(sources.size > 1, `settled from ${sources.size} channel(s)`);
  t.is(await balance(payTo), before + BigInt(n) * PRICE);
});

test.serial('one authorization sent twice at once settles once', async (t) => {
  const before = await balance(poolWallet.publicKey());
  const q = await quote({ url: demo.quoteUrl }, payer, fetchOpts());
  const signed = await sign(q, poolWallet, payer);
  const [a, b] = await Promise.all([
    client.settle(signed.paymentPayload, q.requirements),
    client.settle(signed.paymentPayload, q.requirements),
  ]);
  t.is([a, b].filter((r) => r.success).length, 1);
  t.is(await balance(poolWallet.publicKey()), before - PRICE);
});

test.serial(
  'our facilitator refuses a replay, a wrong amount, a wrong payTo, an expired authorization and a bad signature',
  async (t) => {
    // a few seconds of ledgers, so that the measured ledger time bounds the expiration tightly
    await waitPastLedger(server, 25);
    const before = await balance(poolWallet.publicKey());
    const { q, signed } = await pay({ url: demo.quoteUrl });
    const afterPaid = await balance(poolWallet.publicKey());
    t.is(afterPaid, before - PRICE);
    const replay = await client.verify(signed.paymentPayload, q.requirements);
    t.is(replay.invalidReason, 'invalid_exact_stellar_payload_simulation_failed');
    const replaySettle = await client.settle(signed.paymentPayload, q.requirements).catch((e) => e);
    t.false(replaySettle.success);
    const again = await send({ url: demo.quoteUrl }, signed, fetchOpts()).catch((e) => e);
    t.true(isX402Error(again, 'payment_rejected'));

    const fresh = await sign(await quote({ url: demo.quoteUrl }, payer, fetchOpts()), poolWallet, payer);
    t.is(
      (await client.verify(fresh.paymentPayload, { ...q.requirements, amount: '1' })).invalidReason,
      'invalid_exact_stellar_payload_wrong_amount',
    );
    t.is(
      (await client.verify(fresh.paymentPayload, { ...q.requirements, payTo: Keypair.random().publicKey() }))
        .invalidReason,
      'invalid_exact_stellar_payload_wrong_recipient',
    );
    t.is(
      (await client.verify(withBadSignature(fresh.paymentPayload), q.requirements)).invalidReason,
      'invalid_exact_stellar_payload_simulation_failed',
    );
    t.is(
      (
        await client.verify(fresh.paymentPayload, {
          ...q.requirements,
          asset: 'CAS3J7GYLGXMF6TDJBBYYSE3HQ6BBSMLNUQ34T6TZMYMW2EVH34XOWMA',
        })
      ).invalidReason,
      'invalid_exact_stellar_payload_wrong_asset',
    );
    t.is(
      (await client.verify({ ...fresh.paymentPayload, payload: { transaction: 'AAAA' } }, q.requirements))
        .invalidReason,
      'invalid_exact_stellar_payload_malformed',
    );
    t.is(
      (await client.verify(fresh.paymentPayload, { ...q.requirements, maxTimeoutSeconds: 1 })).invalidReason,
      'invalid_exact_stellar_signature_expiration_too_far',
    );
    t.true((await client.verify(fresh.paymentPayload, q.requirements)).isValid);

    const expired = await signExpiringSoon(
      await quote({ url: demo.quoteUrl }, payer, fetchOpts()),
      poolWallet,
      payer,
    );
    await waitPastLedger(server, expired.record.expirationLedger);
    t.is(
      (await client.verify(expired.paymentPayload, q.requirements)).invalidReason,
      'invalid_exact_stellar_payload_simulation_failed',
    );
    t.false((await client.settle(expired.paymentPayload, q.requirements)).success);
    t.like(await findAuthorizationUse(server, expired.record), { state: 'unused_expired' });
    t.is(await balance(poolWallet.publicKey()), afterPaid);
  },
);

test.serial(
  'v2 (CAP-71) address credentials are refused, as the official facilitator refuses them',
  async (t) => {
    const q = await quote({ url: demo.quoteUrl }, payer, fetchOpts());
    const signed = await sign(q, poolWallet, payer);
    const v2 = await withV2Credentials(server, STANDALONE_PASSPHRASE, poolWallet, signed.paymentPayload);
    t.is(
      (await client.verify(v2, q.requirements)).invalidReason,
      'invalid_exact_stellar_payload_unsupported_credential_type',
    );
    t.false((await client.settle(v2, q.requirements)).success);
  },
);

test.serial('malformed requests to the facilitator get a 400, other routes 404/405', async (t) => {
  const post = (path: string, body: string) =>
    fetch(`${facilitator.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
  t.is((await post('/verify', 'not json')).status, 400);
  t.is((await post('/verify', '{}')).status, 400);
  t.is((await post('/settle', JSON.stringify({ paymentPayload: {}, paymentRequirements: {} }))).status, 400);
  t.is((await post('/settle', 'x'.repeat(300 * 1024))).status, 400);
  t.is((await fetch(`${facilitator.url}/verify`)).status, 405);
  t.is((await fetch(`${facilitator.url}/nope`)).status, 404);
  // another network is not ours
  const q = await quote({ url: demo.quoteUrl }, payer, fetchOpts());
  const signed = await sign(q, poolWallet, payer);
  const foreign = { ...q.requirements, network: 'stellar:testnet' as const };
  const res = await client.verify({ ...signed.paymentPayload, accepted: foreign }, foreign);
  t.false(res.isValid);
});
