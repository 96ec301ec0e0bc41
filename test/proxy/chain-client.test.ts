// The proxy's chain client against a real sandbox over its RPC, when another spender shares its source
// account (a second proxy on the same operator, or the sandbox's friendbot minting as the admin): a
// transaction whose sequence number was taken meanwhile is refused with txBadSeq and nothing is applied;
// the client builds and signs it again on the current sequence (each signed hash handed to the caller
// first), and gives up with the typed result code after a bounded number of attempts; other refusals are
// not retried.
import test from 'ava';
import { Address, nativeToScVal } from '#stellar-sdk';
import type { PoolSandbox } from '../../src/deploy/sandbox-network.ts';
import { ChainClient, LedgerRejected } from '../../src/proxy/services/chain-client.ts';
import { newAccount, startSandbox } from '../x402/helpers.ts';

let sandbox: PoolSandbox;
/** How far the sandbox's clock runs ahead of the real one (a test moves it instead of sleeping). */
let ahead = 0;
test.before(async () => {
  ({ sandbox } = await startSandbox({ ledgerMs: 100, clock: () => Date.now() + ahead }));
});
test.after.always(async () => {
  await sandbox?.close();
});

const client = (txTimeoutSeconds = 60) =>
  new ChainClient({
    rpcUrl: sandbox.rpcUrl,
    networkPassphrase: sandbox.info.networkPassphrase,
    baseFee: 100,
    txTimeoutSeconds,
    confirmTimeoutMs: 30_000,
  });

/** A funded source account, two clients spending from it, and two different calls (not one transaction). */
async function twoSpenders() {
  const source = await newAccount(sandbox);
  return {
    source,
    token: sandbox.info.contracts.token,
    args: [new Address(source.publicKey()).toScVal()],
    other: [new Address(sandbox.info.contracts.pool).toScVal()],
    ours: client(),
    theirs: client(),
  };
}

test('a transaction whose sequence another client took is signed again and lands once', async (t) => {
  const { source, token, args, other, ours, theirs } = await twoSpenders();
  const signed: string[] = [];
  const confirmed = await ours.invokeAndConfirm(source, token, 'balance', args, {
    signed: async ({ hash }) => {
      signed.push(hash);
      // The other spender lands a transaction on the same sequence before ours is sent.
      if (signed.length === 1) await theirs.invokeAndConfirm(source, token, 'balance', other);
    },
  });
  t.is(signed.length, 2, 'built and signed again once');
  t.not(signed[0], signed[1]);
  t.is(confirmed.hash, signed[1]);
  t.is((await ours.status(signed[0]!)).status, 'NOT_FOUND', 'the refused one was never applied');
  t.is((await ours.status(signed[1]!)).status, 'SUCCESS');
});

test('a sequence taken at every attempt ends in ledger_rejected with the result code, after three', async (t) => {
  const { source, token, args, other, ours, theirs } = await twoSpenders();
  const signed: string[] = [];
  const error = await t.throwsAsync(
    ours.invokeAndConfirm(source, token, 'balance', args, {
      signed: async ({ hash }) => {
        signed.push(hash);
        await theirs.invokeAndConfirm(source, token, 'balance', other);
      },
    }),
    { instanceOf: LedgerRejected },
  );
  t.is(error?.code, 'ledger_rejected');
  t.is(error?.resultCode, 'txBadSeq');
  t.regex(error?.message ?? '', /txBadSeq/);
  t.is(signed.length, 3);
  for (const hash of signed) t.is((await ours.status(hash)).status, 'NOT_FOUND');
});

test('a refusal at submission that is not about the sequence is not retried', async (t) => {
  const source = await newAccount(sandbox);
  const signed: string[] = [];
  // A time bound of one second, passed (on the network's clock) before the transaction is sent: the ledger
  // refuses it (txTooLate).
  const error = await t.throwsAsync(
    client(1).invokeAndConfirm(
      source,
      sandbox.info.contracts.token,
      'balance',
      [new Address(source.publicKey()).toScVal()],
      {
        signed: async ({ hash }) => {
          signed.push(hash);
          ahead += 2_200;
        },
      },
    ),
    { instanceOf: LedgerRejected },
  );
  t.is(error?.resultCode, 'txTooLate');
  t.is(signed.length, 1, 'signed once: only txBadSeq is built again');
});

test('a refused simulation signs nothing and carries no result code', async (t) => {
  const source = await newAccount(sandbox);
  const signed: string[] = [];
  // The token refuses a transfer of more than the account holds: the simulation fails, nothing is signed.
  const error = await t.throwsAsync(
    client().invokeAndConfirm(
      source,
      sandbox.info.contracts.token,
      'transfer',
      [
        new Address(source.publicKey()).toScVal(),
        new Address(sandbox.info.contracts.pool).toScVal(),
        nativeToScVal(1_000_000_000n, { type: 'i128' }),
      ],
      { signed: async ({ hash }) => void signed.push(hash) },
    ),
    { instanceOf: LedgerRejected },
  );
  t.is(error?.resultCode, undefined);
  t.is(signed.length, 0);
});
