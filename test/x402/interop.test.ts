// Interop with the official packages, the test of truth: a sandbox on the TESTNET passphrase, the official
// @x402/stellar facilitator (ExactStellarScheme inside @x402/core's x402Facilitator) and an independent paid
// service on @x402/core's resource server with the official server scheme. OUR client quotes, signs (for the
// pool wallet), sends and confirms; the transfer lands on chain. Replays, a wrong amount, a wrong payTo, an
// expired authorization and a bad signature are refused by the official facilitator.
import { Keypair, type rpc, TransactionBuilder } from '#stellar-sdk';
import { x402Facilitator } from '@x402/core/facilitator';
import { x402ResourceServer, type FacilitatorClient } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { createEd25519Signer } from '@x402/stellar';
import { ExactStellarScheme as OfficialFacilitatorScheme } from '@x402/stellar/exact/facilitator';
import { ExactStellarScheme as OfficialServerScheme } from '@x402/stellar/exact/server';
import test from 'ava';
import { TESTNET_PASSPHRASE } from '../../src/ledger/networks.ts';
import type { PoolSandbox } from '../../src/deploy/sandbox-network.ts';
import {
  ExactStellarClient,
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
  newAccount,
  startPaidService,
  startSandbox,
  tokenBalance,
  waitPastLedger,
  withBadSignature,
  withV2Credentials,
  signExpiringSoon,
  fund,
} from './helpers.ts';

const NETWORK = 'stellar:testnet';
const PRICE = 100_000n;
/** a token contract the pool does not hold */
const OTHER_TOKEN = 'CAS3J7GYLGXMF6TDJBBYYSE3HQ6BBSMLNUQ34T6TZMYMW2EVH34XOWMA';

let sandbox: PoolSandbox;
let server: rpc.Server;
let token: string;
let poolWallet: Keypair;
let payTo: string;
let facilitator: x402Facilitator;
let service: Awaited<ReturnType<typeof startPaidService>>;
let payer: PayerNetwork;

test.before(async () => {
  ({ sandbox, server } = await startSandbox({ ledgerMs: 250, networkPassphrase: TESTNET_PASSPHRASE }));
  token = sandbox.info.contracts.token;
  poolWallet = Keypair.fromSecret(sandbox.secrets().poolWallet);
  await fund(sandbox, poolWallet.publicKey(), '100');
  const facilitatorAccount = await newAccount(sandbox);
  payTo = (await newAccount(sandbox)).publicKey();
  facilitator = new x402Facilitator().register(
    NETWORK,
    // default options: the 50,000-stroop fee cap and the expiration bound of 5 s ledgers (no Horizon here)
    new OfficialFacilitatorScheme([createEd25519Signer(facilitatorAccount.secret(), NETWORK)], {
      rpcConfig: { url: sandbox.rpcUrl },
    }) as never,
  );
  const client: FacilitatorClient = {
    verify: (p, r) => facilitator.verify(p, r),
    settle: (p, r) => facilitator.settle(p, r),
    getSupported: async () =>
      facilitator.getSupported() as Awaited<ReturnType<FacilitatorClient['getSupported']>>,
  };
  // @x402/core >= 2.22 asks server schemes for their payment flows; @x402/stellar 2.9.0's has none
  const serverScheme = Object.assign(new OfficialServerScheme(), {
    defaultAssetTransferMethod: 'default',
    paymentFlows: { default: { supported: ['authorization'], default: 'authorization' } },
  });
  const resourceServer = new x402ResourceServer(client).register(NETWORK, serverScheme as never);
  service = await startPaidService(
    resourceServer,
    {
      'GET /weather': {
        accepts: {
          scheme: 'exact',
          price: { amount: PRICE.toString(), asset: token },
          network: NETWORK,
          payTo,
        },
        description: 'weather',
      },
      'GET /other-token': {
        accepts: {
          scheme: 'exact',
          price: { amount: PRICE.toString(), asset: OTHER_TOKEN },
          network: NETWORK,
          payTo,
        },
      },
    },
    () => ({ status: 200, contentType: 'application/json', body: JSON.stringify({ sky: 'clear' }) }),
  );
  // nothing about the facilitator is given: the payer signs for the nominal 5 s ledgers on its own
  payer = { rpcUrl: sandbox.rpcUrl, networkPassphrase: TESTNET_PASSPHRASE, asset: token };
});

test.after.always(async () => {
  await service?.close();
  await sandbox?.close();
});

// generous: the machine may be loaded, and the time cap has its own test
const fetchOpts = () => ({ allowedHosts: [new URL(service.url).host], timeoutMs: 120_000 });
const weather = () => ({ url: `${service.url}/weather`, method: 'GET' });
const balance = (who: string) => tokenBalance(server, TESTNET_PASSPHRASE, token, who);

let settled: SignedPayment | undefined;
let requirements: PaymentRequirements;

test.serial(
  'quote → sign → send → confirmTransfer through the official facilitator; the transfer is on chain',
  async (t) => {
    const before = [await balance(poolWallet.publicKey()), await balance(payTo)];
    const q = await quote(weather(), payer, fetchOpts());
    t.is(q.amount, PRICE);
    t.is(q.network, NETWORK);
    t.is(q.payTo, payTo);
    t.is(q.asset, token);
    requirements = q.requirements;

    const signed = await sign(q, poolWallet, payer);
    t.is(signed.record.payer, poolWallet.publicKey());
    t.is(signed.record.amount, PRICE.toString());
    t.regex(signed.record.nonce, /^-?\d+$/);
    t.true(signed.record.expirationLedger > signed.record.signedAtLedger);
    // the route's default maxTimeoutSeconds (300) is 60 nominal 5 s ledgers, whatever the sandbox's pace
    t.is(q.maxTimeoutSeconds, 300);
    t.true(signed.record.expirationLedger <= signed.record.signedAtLedger + 60);
    const decoded = JSON.parse(Buffer.from(signed.header, 'base64').toString()) as PaymentPayload;
    t.is(decoded.x402Version, 2);
    t.deepEqual(decoded.accepted, q.requirements);
    // priced like testnet: the whole fee (resource fee + inclusion fee) under the official 50,000 cap
    const envelope = TransactionBuilder.fromXDR(String(decoded.payload.transaction), TESTNET_PASSPHRASE);
    t.true(Number(envelope.fee) < 50_000, `fee ${envelope.fee}`);
    // (latestLedger is whatever ledger the RPC had closed when asked: only its order is checked)
    const unused = (await findAuthorizationUse(server, signed.record)) as {
      state: string;
      latestLedger: number;
      expirationLedger: number;
    };
    t.deepEqual(Object.keys(unused).sort(), ['expirationLedger', 'latestLedger', 'state']);
    t.like(unused, { state: 'pending', expirationLedger: signed.record.expirationLedger });
    t.true(unused.latestLedger >= signed.record.signedAtLedger);

    const res = await send(weather(), signed, fetchOpts());
    t.is(res.status, 200);
    t.deepEqual(JSON.parse(res.body.toString()), { sky: 'clear' });
    t.truthy(res.settlement?.success);
    t.is(res.settlement?.network, NETWORK);
    t.is(res.settlement?.payer, poolWallet.publicKey());
    const txHash = res.settlement!.transaction;

    const confirmed = await confirmTransfer(server, txHash, { ...signed.record });
    t.is(confirmed.txHash, txHash);
    t.deepEqual(
      [await balance(poolWallet.publicKey()), await balance(payTo)],
      [before[0]! - PRICE, before[1]! + PRICE],
    );
    const use = await findAuthorizationUse(server, signed.record);
    t.like(use, { state: 'used', txHash, ledger: confirmed.ledger });

    // the same transaction is not a transfer to someone else, nor of another amount
    const mismatch = await confirmTransfer(server, txHash, { ...signed.record, amount: PRICE + 1n }).catch(
      (e) => e,
    );
    t.true(isX402Error(mismatch, 'transfer_mismatch'));
    const wrongTo = await confirmTransfer(server, txHash, {
      ...signed.record,
      payTo: Keypair.random().publicKey(),
    }).catch((e) => e);
    t.true(isX402Error(wrongTo, 'transfer_mismatch'));
    const unknown = await confirmTransfer(server, 'ab'.repeat(32), signed.record).catch((e) => e);
    t.true(isX402Error(unknown, 'tx_not_found'));
    const bad = await confirmTransfer(server, 'not-a-hash', signed.record).catch((e) => e);
    t.true(isX402Error(bad, 'bad_tx_hash'));
    settled = signed;
  },
);

test.serial(
  'the official facilitator refuses a replay, a wrong amount, a wrong payTo and a bad signature',
  async (t) => {
    t.truthy(settled);
    const replay = await facilitator.verify(settled!.paymentPayload, requirements);
    t.false(replay.isValid);
    t.is(replay.invalidReason, 'invalid_exact_stellar_payload_simulation_failed');
    // a replay through the service is refused too, and moves nothing
    const before = await balance(poolWallet.publicKey());
    const again = await send(weather(), settled!, fetchOpts()).catch((e) => e);
    t.true(isX402Error(again, 'payment_rejected'));
    t.is(await balance(poolWallet.publicKey()), before);

    const fresh = await sign(await quote(weather(), payer, fetchOpts()), poolWallet, payer);
    const wrongAmount = await facilitator.verify(fresh.paymentPayload, {
      ...requirements,
      amount: String(PRICE * 2n),
    });
    t.is(wrongAmount.invalidReason, 'invalid_exact_stellar_payload_wrong_amount');
    const wrongPayTo = await facilitator.verify(fresh.paymentPayload, {
      ...requirements,
      payTo: Keypair.random().publicKey(),
    });
    t.is(wrongPayTo.invalidReason, 'invalid_exact_stellar_payload_wrong_recipient');
    const badSig = await facilitator.verify(withBadSignature(fresh.paymentPayload), requirements);
    t.false(badSig.isValid);
    const settleBad = await facilitator.settle(withBadSignature(fresh.paymentPayload), requirements);
    t.false(settleBad.success);
    // @x402/stellar 2.9.0 cannot read CAP-71 v2 credentials (hence v1 in our client)
    const v2 = await withV2Credentials(server, TESTNET_PASSPHRASE, poolWallet, fresh.paymentPayload);
    t.false((await facilitator.verify(v2, requirements)).isValid);
    // the untouched payload is still good
    t.true((await facilitator.verify(fresh.paymentPayload, requirements)).isValid);
    t.is(await balance(poolWallet.publicKey()), before);
  },
);

test.serial('an expired authorization is refused and reconciles as unused', async (t) => {
  const q = await quote(weather(), payer, fetchOpts());
  const signed = await signExpiringSoon(q, poolWallet, payer);
  t.true(signed.record.expirationLedger <= signed.record.signedAtLedger + 48);
  await waitPastLedger(server, signed.record.expirationLedger);
  const res = await facilitator.verify(signed.paymentPayload, q.requirements);
  t.false(res.isValid);
  t.is(res.invalidReason, 'invalid_exact_stellar_payload_simulation_failed');
  const sent = await send(weather(), signed, fetchOpts()).catch((e) => e);
  t.true(isX402Error(sent, 'payment_rejected'));
  t.like(await findAuthorizationUse(server, signed.record), { state: 'unused_expired' });
});

test.serial(
  'what is not ours is refused before signing: another token, a free answer, foreign requirements',
  async (t) => {
    const other = await quote({ url: `${service.url}/other-token` }, payer, fetchOpts()).catch((e) => e);
    t.true(isX402Error(other, 'no_matching_offer'));
    t.like(other.details.offered[0], { scheme: 'exact', network: NETWORK, asset: OTHER_TOKEN });
    const free = await quote({ url: `${service.url}/free` }, payer, fetchOpts()).catch((e) => e);
    t.true(isX402Error(free, 'not_x402'));
    t.is(free.details.response.status, 200);
    const notAllowed = await quote({ url: `${service.url}/weather` }, payer).catch((e) => e);
    t.true(isX402Error(notAllowed, 'private_address'));

    const client = new ExactStellarClient({
      signer: poolWallet,
      rpcUrl: sandbox.rpcUrl,
      networkPassphrase: TESTNET_PASSPHRASE,
      assets: [token],
    });
    for (const bad of [
      { scheme: 'upto' },
      { network: 'stellar:pubnet' },
      { asset: OTHER_TOKEN },
      { amount: '0' },
      { amount: '-5' },
      { amount: '1.5' },
      { payTo: 'GNOTANADDRESS' },
      { maxTimeoutSeconds: 0 },
      { extra: {} },
    ]) {
      const err = await client
        .createPaymentPayload(2, { ...requirements, ...bad } as PaymentRequirements)
        .catch((e) => e);
      t.true(isX402Error(err, 'requirements_not_ours'), JSON.stringify(bad));
    }
    // a payer without the funds cannot produce a payload: the simulation fails
    const broke = new ExactStellarClient({
      signer: await newAccount(sandbox),
      rpcUrl: sandbox.rpcUrl,
      networkPassphrase: TESTNET_PASSPHRASE,
      assets: [token],
    });
    t.true(
      isX402Error(await broke.createPaymentPayload(2, requirements).catch((e) => e), 'simulation_failed'),
    );
  },
);
