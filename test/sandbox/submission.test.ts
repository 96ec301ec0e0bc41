// Submission semantics with ledgers closed by hand: DUPLICATE and TRY_AGAIN_LATER answers, a landed
// transaction sent again (banned as stellar-core bans applied transactions, then txBadSeq), a queued
// transaction of the account friendbot signs its mints with, and fee-bump envelopes (a sponsor pays, the inner
// source only signs), including refused fee bumps.
import test from 'ava';
import { Account, Keypair, rpc, TransactionBuilder } from '#stellar-sdk';
import type { PoolSandbox as Sandbox } from '../../src/deploy/sandbox-network.ts';
import { STANDALONE_PASSPHRASE } from '../../src/ledger/networks.ts';
import { BAN_LEDGERS } from '../../src/sandbox/chain.ts';
import { address, i128, invokeTx, startSandbox, tokenBalance } from './helpers.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let sandbox: Sandbox;
let server: rpc.Server;
let token: string;

test.before(async () => {
  // ledgers close only when a test closes them
  ({ sandbox, server } = await startSandbox({ ledgerMs: 3_600_000 }));
  token = sandbox.info.contracts.token;
});
test.after.always(async () => {
  await sandbox?.close();
});

const USDC = 10_000_000n;

/** Friendbot answers once its ledger closed: close ledgers until it has. */
async function fundNow(usdc?: string): Promise<Keypair> {
  const kp = Keypair.random();
  let done = false;
  const res = fetch(`${sandbox.url}/friendbot?addr=${kp.publicKey()}${usdc ? `&usdc=${usdc}` : ''}`).finally(
    () => {
      done = true;
    },
  );
  while (!done) {
    await sandbox.chain.closeLedger();
    await new Promise((r) => setTimeout(r, 5));
  }
  if ((await res).status !== 200) throw new Error('friendbot failed');
  return kp;
}

async function preparedTransfer(from: Keypair, to: string, amount: bigint, account?: Account) {
  const source = account ?? (await server.getAccount(from.publicKey()));
  const tx = await server.prepareTransaction(
    invokeTx(source, token, 'transfer', [address(from.publicKey()), address(to), i128(amount)]),
  );
  tx.sign(from);
  return tx;
}

const xlm = async (who: string) => BigInt((await server.getAccountEntry(who)).balance as unknown as bigint);

test.serial(
  'the same envelope twice is DUPLICATE; a second one from the same source is TRY_AGAIN_LATER',
  async (t) => {
    const alice = await fundNow('10');
    const bob = (await fundNow()).publicKey();
    const account = await server.getAccount(alice.publicKey());
    const first = await preparedTransfer(alice, bob, USDC, account);
    const second = await preparedTransfer(alice, bob, USDC, account); // next sequence number
    const a = await server.sendTransaction(first);
    t.is(a.status, 'PENDING');
    t.is((await server.sendTransaction(first)).status, 'DUPLICATE');
    t.is((await server.sendTransaction(second)).status, 'TRY_AGAIN_LATER');
    t.is((await server.getTransaction(a.hash)).status, rpc.Api.GetTransactionStatus.NOT_FOUND);
    await sandbox.chain.closeLedger();
    t.is((await server.getTransaction(a.hash)).status, rpc.Api.GetTransactionStatus.SUCCESS);
    // now the second one is admissible
    const b = await server.sendTransaction(second);
    t.is(b.status, 'PENDING');
    await sandbox.chain.closeLedger();
    t.is((await server.getTransaction(b.hash)).status, rpc.Api.GetTransactionStatus.SUCCESS);
    t.is(await tokenBalance(server, token, bob), 2n * USDC);
  },
);

test.serial(
  'a landed transaction sent again is TRY_AGAIN_LATER for 9 closes (stellar-core bans applied ones), then ERROR txBadSeq',
  async (t) => {
    const alice = await fundNow('10');
    const bob = (await fundNow()).publicKey();
    const tx = await preparedTransfer(alice, bob, USDC);
    const sent = await server.sendTransaction(tx);
    t.is(sent.status, 'PENDING');
    await sandbox.chain.closeLedger();
    const landedIn = (await server.getLatestLedger()).sequence;
    t.is((await server.getTransaction(sent.hash)).status, rpc.Api.GetTransactionStatus.SUCCESS);
    // banned in the ledger it landed in and the 8 after it …
    for (let age = 0; age < BAN_LEDGERS - 1; age++) {
      t.is((await server.getLatestLedger()).sequence, landedIn + age);
      const again = await server.sendTransaction(tx);
      t.is(again.status, 'TRY_AGAIN_LATER', `${age} closes later`);
      t.is(again.hash, sent.hash);
      t.is(again.errorResult, undefined);
      await sandbox.chain.closeLedger();
    }
    // … then the ban is over and the used sequence number refuses it
    const late = await server.sendTransaction(tx);
    t.is(late.status, 'ERROR');
    t.is(late.errorResult?.result.type, 'txBadSeq');
    // applied once: bob got 1 USDC
    t.is(await tokenBalance(server, token, bob), USDC);
  },
);

test.serial(
  'a friendbot mint in the same ledger as a queued transaction of the issuer (its signer) lets that transaction land',
  async (t) => {
    // The issuer (the sandbox's admin, also the allowlist's admin) has a transaction in the queue; friendbot's
    // USDC mint, signed by the issuer, is asked for before the ledger closes. On a network the mint would be
    // queued behind it (one transaction per source account); it must not take the queued one's sequence number.
    const issuer = Keypair.fromSecret(sandbox.secrets().admin);
    const bob = (await fundNow()).publicKey();
    let attempt = 0;
    let shared = false;
    while (!shared && attempt < 5) {
      attempt++;
      const account = await server.getAccount(issuer.publicKey());
      const queued = await server.prepareTransaction(
        invokeTx(account, token, 'mint', [address(bob), i128(USDC)]),
      );
      queued.sign(issuer);
      const sent = await server.sendTransaction(queued);
      t.is(sent.status, 'PENDING');
      const carol = Keypair.random().publicKey();
      const funding = fetch(`${sandbox.url}/friendbot?addr=${carol}&usdc=2`);
      await sleep(100 * attempt); // friendbot's job joins the next close once its request has arrived
      await sandbox.chain.closeLedger();
      let minted: { ledger: number } | undefined;
      while (minted === undefined) {
        const answer = await Promise.race([funding, sleep(20).then(() => undefined)]);
        if (answer) minted = (await answer.json()) as { ledger: number };
        else await sandbox.chain.closeLedger();
      }
      const landed = await server.getTransaction(sent.hash);
      t.is(
        landed.status,
        rpc.Api.GetTransactionStatus.SUCCESS,
        `the issuer's queued mint (attempt ${attempt})`,
      );
      t.is(await tokenBalance(server, token, carol), 2n * USDC);
      // friendbot's request may have arrived after the close: then try again
      shared = landed.status === rpc.Api.GetTransactionStatus.SUCCESS && minted.ledger === landed.ledger;
    }
    t.true(shared, 'friendbot shared a ledger with the queued transaction');
    t.is(await tokenBalance(server, token, bob), BigInt(attempt) * USDC);
  },
);

test.serial('a fee bump: the sponsor pays the fee, the inner source pays nothing', async (t) => {
  const alice = await fundNow('10');
  const sponsor = await fundNow();
  const bob = (await fundNow()).publicKey();
  const aliceXlm = await xlm(alice.publicKey());
  const sponsorXlm = await xlm(sponsor.publicKey());
  const inner = await preparedTransfer(alice, bob, 3n * USDC);
  const bump = TransactionBuilder.buildFeeBumpTransaction(sponsor, '200', inner, STANDALONE_PASSPHRASE);
  bump.sign(sponsor);
  const sent = await server.sendTransaction(bump);
  t.is(sent.status, 'PENDING');
  t.is(sent.hash, Buffer.from(bump.hash()).toString('hex'));
  await sandbox.chain.closeLedger();
  const done = await server.getTransaction(sent.hash);
  t.is(done.status, rpc.Api.GetTransactionStatus.SUCCESS);
  if (done.status === rpc.Api.GetTransactionStatus.SUCCESS) {
    t.true(done.feeBump);
    t.is(done.resultXdr.result.type, 'txFeeBumpInnerSuccess');
    t.is(done.returnValue?.type, 'scvVoid');
    const charged = BigInt(done.resultXdr.feeCharged as unknown as bigint);
    t.is(await xlm(sponsor.publicKey()), sponsorXlm - charged);
  }
  t.is(await xlm(alice.publicKey()), aliceXlm);
  t.is(await tokenBalance(server, token, bob), 3n * USDC);
  // the inner source's sequence number was consumed
  t.is((await server.getAccount(alice.publicKey())).sequenceNumber(), inner.sequence);
});

test.serial(
  'refused fee bumps: unsigned or wrongly signed by the sponsor, inner unsigned, unknown sponsor',
  async (t) => {
    const alice = await fundNow('10');
    const sponsor = await fundNow();
    const bob = (await fundNow()).publicKey();
    const inner = await preparedTransfer(alice, bob, USDC);
    const unsigned = TransactionBuilder.buildFeeBumpTransaction(sponsor, '200', inner, STANDALONE_PASSPHRASE);
    t.is((await server.sendTransaction(unsigned)).errorResult?.result.type, 'txBadAuth');
    const wrongSigner = TransactionBuilder.buildFeeBumpTransaction(
      sponsor,
      '200',
      inner,
      STANDALONE_PASSPHRASE,
    );
    wrongSigner.sign(alice);
    t.is((await server.sendTransaction(wrongSigner)).errorResult?.result.type, 'txBadAuth');
    // inner transaction without alice's signature
    const bare = await server.prepareTransaction(
      invokeTx(await server.getAccount(alice.publicKey()), token, 'transfer', [
        address(alice.publicKey()),
        address(bob),
        i128(USDC),
      ]),
    );
    const bumpBare = TransactionBuilder.buildFeeBumpTransaction(sponsor, '200', bare, STANDALONE_PASSPHRASE);
    bumpBare.sign(sponsor);
    const refused = await server.sendTransaction(bumpBare);
    t.is(refused.status, 'ERROR');
    t.is(refused.errorResult?.result.type, 'txFeeBumpInnerFailed');
    const pair = refused.errorResult?.result.value as { result: { result: { type: string } } } | undefined;
    t.is(pair?.result.result.type, 'txBadAuth');
    // a sponsor without an account
    const ghost = Keypair.random();
    const ghostBump = TransactionBuilder.buildFeeBumpTransaction(ghost, '200', inner, STANDALONE_PASSPHRASE);
    ghostBump.sign(ghost);
    t.is((await server.sendTransaction(ghostBump)).errorResult?.result.type, 'txNoAccount');
    await sandbox.chain.closeLedger();
    t.is(await tokenBalance(server, token, bob), 0n);
  },
);
