// USDC transfers through rpc.Server exactly as client code makes them: signed as source account, and
// authorized by an address-credential entry (authorizeEntry, v1 and CAP-71 v2 credentials). Then every
// kind of bad transaction is refused and changes no balance.

import {
  Account,
  Asset,
  authorizeEntry,
  Contract,
  Keypair,
  rpc,
  SorobanDataBuilder,
  StrKey,
  TransactionBuilder,
  xdr,
} from '#stellar-sdk';
import test from 'ava';
import type { PoolSandbox as Sandbox } from '../../src/deploy/sandbox-network.ts';
import { STANDALONE_PASSPHRASE } from '../../src/ledger/networks.ts';
import { address, fund, i128, invokeTx, startSandbox, submit, tokenBalance, txWithAuth } from './helpers.ts';

let sandbox: Sandbox;
let server: rpc.Server;
let token: string;

test.before(async () => {
  ({ sandbox, server } = await startSandbox());
  token = sandbox.info.contracts.token;
});
test.after.always(async () => {
  await sandbox?.close();
});

const USDC = 10_000_000n;

async function newAccount(usdc?: string): Promise<Keypair> {
  const kp = Keypair.random();
  const res = await fund(sandbox, kp.publicKey(), usdc);
  if (res.status !== 200) throw new Error(`friendbot: ${await res.text()}`);
  return kp;
}

const copy = (a: Account) => new Account(a.accountId(), a.sequenceNumber());

/** Simulates a transfer from `from` (not the source) and returns the recorded entry and the simulation. */
async function recordTransfer(relayer: Account, from: string, to: string, amount: bigint, v2 = false) {
  const call = new Contract(token).call('transfer', address(from), address(to), i128(amount));
  const sim = await server.simulateTransaction(
    invokeTx(copy(relayer), token, 'transfer', [address(from), address(to), i128(amount)]),
    undefined,
    undefined,
    v2,
  );
  if (!rpc.Api.isSimulationSuccess(sim)) throw new Error(sim.error);
  return { call, sim, entry: sim.result!.auth[0] as xdr.SorobanAuthorizationEntry };
}

async function balances(...who: string[]): Promise<bigint[]> {
  return Promise.all(who.map((w) => tokenBalance(server, token, w)));
}

test('friendbot → getAccount → transfer signed as source account moves balances exactly', async (t) => {
  const alice = await newAccount('100');
  const bob = await newAccount();
  t.deepEqual(await balances(alice.publicKey()), [100n * USDC]);
  const account = await server.getAccount(alice.publicKey());
  const tx = await server.prepareTransaction(
    invokeTx(account, token, 'transfer', [
      address(alice.publicKey()),
      address(bob.publicKey()),
      i128(12_3456789n),
    ]),
  );
  tx.sign(alice);
  const { sent, final } = await submit(server, tx);
  t.is(sent.status, 'PENDING');
  t.is(final?.status, rpc.Api.GetTransactionStatus.SUCCESS);
  t.deepEqual(await balances(alice.publicKey(), bob.publicKey()), [100n * USDC - 12_3456789n, 12_3456789n]);
  // wallets read a G-account's USDC as a trustline (getAssetBalance), as on a real network
  const usdc = new Asset('USDC', sandbox.info.accounts.admin);
  const asTrustline = await server.getAssetBalance(alice.publicKey(), usdc);
  t.is(asTrustline.balanceEntry?.amount, String(100n * USDC - 12_3456789n));
  t.true(asTrustline.balanceEntry?.authorized);
  await t.throwsAsync(server.getAssetBalance(Keypair.random().publicKey(), usdc), { message: /Trustline/ });
  await t.throwsAsync(
    server.getAssetBalance(alice.publicKey(), new Asset('EURC', sandbox.info.accounts.admin)),
    {
      message: /Trustline/,
    },
  );
  // sequence number consumed, fee charged
  const after = await server.getAccount(alice.publicKey());
  t.is(BigInt(after.sequenceNumber()), BigInt(account.sequenceNumber()));
  if (final?.status === rpc.Api.GetTransactionStatus.SUCCESS) {
    t.is(final.returnValue?.type, 'scvVoid');
    t.is(final.resultXdr.result.type, 'txSuccess');
    t.true(final.resultXdr.feeCharged > 100n);
    t.is(final.events.contractEventsXdr[0]?.length, 1);
    // the meta lists the two trustlines, each updated with its prior state
    const meta = final.resultMetaXdr.value as xdr.TransactionMetaV4;
    const changes = meta.operations[0]?.changes ?? [];
    t.deepEqual(changes.map((c) => c.type).sort(), [
      'ledgerEntryState',
      'ledgerEntryState',
      'ledgerEntryUpdated',
      'ledgerEntryUpdated',
    ]);
    t.true(
      changes.every(
        (c) => c.type !== 'ledgerEntryUpdated' || (c.value as xdr.LedgerEntry).data.type === 'trustline',
      ),
    );
  }
});

for (const v2 of [false, true]) {
  test(`transfer authorized by a signed address-credential entry (${v2 ? 'v2' : 'v1'} credentials)`, async (t) => {
    const alice = await newAccount('50');
    const relayer = await newAccount();
    const bob = await newAccount();
    const relayerAccount = await server.getAccount(relayer.publicKey());
    const { call, sim, entry } = await recordTransfer(
      relayerAccount,
      alice.publicKey(),
      bob.publicKey(),
      7n * USDC,
      v2,
    );
    t.is(entry.credentials.type, v2 ? 'sorobanCredentialsAddressV2' : 'sorobanCredentialsAddress');
    const latest = (await server.getLatestLedger()).sequence;
    const signed = await authorizeEntry(entry, alice, latest + 50, STANDALONE_PASSPHRASE);
    const tx = await server.prepareTransaction(txWithAuth(relayerAccount, call, [signed], sim));
    tx.sign(relayer);
    const { final } = await submit(server, tx);
    t.is(final?.status, rpc.Api.GetTransactionStatus.SUCCESS);
    t.deepEqual(await balances(alice.publicKey(), bob.publicKey(), relayer.publicKey()), [
      43n * USDC,
      7n * USDC,
      0n,
    ]);
  });
}

test('a transaction for another network passphrase is refused (txBadAuth)', async (t) => {
  const alice = await newAccount('10');
  const account = await server.getAccount(alice.publicKey());
  const tx = new TransactionBuilder(account, {
    fee: '100',
    networkPassphrase: 'Test SDF Network ; September 2015',
  })
    .addOperation(
      new Contract(token).call(
        'transfer',
        address(alice.publicKey()),
        address((await newAccount()).publicKey()),
        i128(1n),
      ),
    )
    .setTimeout(60)
    .build();
  const prepared = await server.prepareTransaction(tx);
  prepared.sign(alice);
  const sent = await server.sendTransaction(prepared);
  t.is(sent.status, 'ERROR');
  t.is(sent.errorResult?.result.type, 'txBadAuth');
  t.deepEqual(await balances(alice.publicKey()), [10n * USDC]);
});

test('bad, missing and extra signatures are refused', async (t) => {
  const alice = await newAccount('10');
  const bob = await newAccount();
  const account = await server.getAccount(alice.publicKey());
  const build = async () =>
    server.prepareTransaction(
      invokeTx(copy(account), token, 'transfer', [
        address(alice.publicKey()),
        address(bob.publicKey()),
        i128(USDC),
      ]),
    );
  const wrongKey = await build();
  wrongKey.sign(Keypair.random());
  t.is((await server.sendTransaction(wrongKey)).errorResult?.result.type, 'txBadAuth');
  const unsigned = await build();
  t.is((await server.sendTransaction(unsigned)).errorResult?.result.type, 'txBadAuth');
  const tampered = await build();
  tampered.sign(alice);
  const sig = tampered.signatures[0] as xdr.DecoratedSignature;
  const bytes = new Uint8Array(sig.signature.value);
  bytes[0] = (bytes[0] as number) ^ 1;
  tampered.signatures[0] = new xdr.DecoratedSignature({ hint: sig.hint, signature: bytes });
  t.is((await server.sendTransaction(tampered)).errorResult?.result.type, 'txBadAuth');
  const extra = await build();
  extra.sign(alice, Keypair.random());
  t.is((await server.sendTransaction(extra)).errorResult?.result.type, 'txBadAuthExtra');
  t.deepEqual(await balances(alice.publicKey(), bob.publicKey()), [10n * USDC, 0n]);
  t.is((await server.getAccount(alice.publicKey())).sequenceNumber(), account.sequenceNumber());
});

test('a stale sequence number is refused (txBadSeq)', async (t) => {
  const alice = await newAccount('10');
  const bob = await newAccount();
  const account = await server.getAccount(alice.publicKey());
  const stale = copy(account);
  const first = await server.prepareTransaction(
    invokeTx(account, token, 'transfer', [address(alice.publicKey()), address(bob.publicKey()), i128(USDC)]),
  );
  first.sign(alice);
  t.is((await submit(server, first)).final?.status, rpc.Api.GetTransactionStatus.SUCCESS);
  // another transaction (2 USDC) on the used sequence number
  const replay = await server.prepareTransaction(
    invokeTx(stale, token, 'transfer', [
      address(alice.publicKey()),
      address(bob.publicKey()),
      i128(2n * USDC),
    ]),
  );
  replay.sign(alice);
  const sent = await server.sendTransaction(replay);
  t.is(sent.errorResult?.result.type, 'txBadSeq');
  // the very same envelope again is not applied twice: TRY_AGAIN_LATER while stellar-core would still ban
  // it, txBadSeq after (the exact window: submission.test.ts)
  const again = await server.sendTransaction(first);
  if (again.status === 'ERROR') t.is(again.errorResult?.result.type, 'txBadSeq');
  else t.is(again.status, 'TRY_AGAIN_LATER');
  t.deepEqual(await balances(alice.publicKey(), bob.publicKey()), [9n * USDC, USDC]);
});

test('expired and not-yet-valid time bounds are refused', async (t) => {
  const alice = await newAccount('10');
  const now = Math.floor(Date.now() / 1000);
  for (const [min, max, code] of [
    [0, now - 10, 'txTooLate'],
    [now + 3600, 0, 'txTooEarly'],
  ] as const) {
    const account = await server.getAccount(alice.publicKey());
    const tx = new TransactionBuilder(account, {
      fee: '100',
      networkPassphrase: STANDALONE_PASSPHRASE,
      timebounds: { minTime: min, maxTime: max },
    })
      .addOperation(
        new Contract(token).call(
          'transfer',
          address(alice.publicKey()),
          address((await newAccount()).publicKey()),
          i128(1n),
        ),
      )
      .build();
    const prepared = await server.prepareTransaction(tx);
    prepared.sign(alice);
    t.is((await server.sendTransaction(prepared)).errorResult?.result.type, code);
  }
  t.deepEqual(await balances(alice.publicKey()), [10n * USDC]);
});

test('a resource fee below the minimum and a fee below resource fee + base fee are refused', async (t) => {
  const alice = await newAccount('10');
  const account = await server.getAccount(alice.publicKey());
  const prepared = await server.prepareTransaction(
    invokeTx(copy(account), token, 'transfer', [
      address(alice.publicKey()),
      address((await newAccount()).publicKey()),
      i128(1n),
    ]),
  );
  const data = new SorobanDataBuilder(prepared.toEnvelope().value.tx.ext.value as xdr.SorobanTransactionData)
    .setResourceFee(10n)
    .build();
  const cheap = TransactionBuilder.cloneFrom(prepared, {
    fee: '100',
    sorobanData: data,
    networkPassphrase: STANDALONE_PASSPHRASE,
  }).build();
  cheap.sign(alice);
  t.is((await server.sendTransaction(cheap)).errorResult?.result.type, 'txSorobanInvalid');
  t.deepEqual(await balances(alice.publicKey()), [10n * USDC]);
});

test('an expired auth entry fails the transaction and moves nothing', async (t) => {
  const alice = await newAccount('10');
  const relayer = await newAccount();
  const bob = await newAccount();
  const relayerAccount = await server.getAccount(relayer.publicKey());
  const { call, sim, entry } = await recordTransfer(relayerAccount, alice.publicKey(), bob.publicKey(), USDC);
  const latest = (await server.getLatestLedger()).sequence;
  const signed = await authorizeEntry(entry, alice, latest, STANDALONE_PASSPHRASE);
  // enforcing preflight already sees the expiry
  const enforced = await server.simulateTransaction(txWithAuth(copy(relayerAccount), call, [signed], sim));
  t.true(rpc.Api.isSimulationError(enforced));
  await sandbox.chain.nextClose();
  const tx = txWithAuth(relayerAccount, call, [signed], sim);
  tx.sign(relayer);
  const { sent, final } = await submit(server, tx);
  t.is(sent.status, 'PENDING');
  t.is(final?.status, rpc.Api.GetTransactionStatus.FAILED);
  t.deepEqual(await balances(alice.publicKey(), bob.publicKey()), [10n * USDC, 0n]);
});

test('a replayed auth entry (nonce already used) fails and moves nothing', async (t) => {
  const alice = await newAccount('10');
  const relayer = await newAccount();
  const bob = await newAccount();
  const relayerAccount = await server.getAccount(relayer.publicKey());
  const { call, sim, entry } = await recordTransfer(
    relayerAccount,
    alice.publicKey(),
    bob.publicKey(),
    2n * USDC,
  );
  const latest = (await server.getLatestLedger()).sequence;
  const signed = await authorizeEntry(entry, alice, latest + 100, STANDALONE_PASSPHRASE);
  const first = await server.prepareTransaction(txWithAuth(relayerAccount, call, [signed], sim));
  first.sign(relayer);
  t.is((await submit(server, first)).final?.status, rpc.Api.GetTransactionStatus.SUCCESS);
  const again = await server.simulateTransaction(txWithAuth(copy(relayerAccount), call, [signed], sim));
  t.true(rpc.Api.isSimulationError(again) && /Error\(Auth/.test(again.error));
  const replay = txWithAuth(relayerAccount, call, [signed], sim);
  replay.sign(relayer);
  const { final } = await submit(server, replay);
  t.is(final?.status, rpc.Api.GetTransactionStatus.FAILED);
  t.deepEqual(await balances(alice.publicKey(), bob.publicKey()), [8n * USDC, 2n * USDC]);
});

test('an auth entry signed by the wrong key or for other arguments is refused', async (t) => {
  const alice = await newAccount('10');
  const relayer = await newAccount();
  const bob = await newAccount();
  const relayerAccount = await server.getAccount(relayer.publicKey());
  const { sim, entry } = await recordTransfer(relayerAccount, alice.publicKey(), bob.publicKey(), USDC);
  const latest = (await server.getLatestLedger()).sequence;
  const mallory = Keypair.random();
  const forged = await authorizeEntry(
    entry,
    async (preimage) => mallory.sign(Buffer.from(xdr.HashIdPreimage.fromXdr(preimage.toXdr()).toXdr())),
    latest + 50,
    STANDALONE_PASSPHRASE,
  ).catch(() => undefined);
  t.is(forged, undefined); // the SDK itself refuses to attach a signature that does not verify
  const signed = await authorizeEntry(entry, alice, latest + 50, STANDALONE_PASSPHRASE);
  // same signed entry, but the transaction asks for a bigger amount
  const bigger = new Contract(token).call(
    'transfer',
    address(alice.publicKey()),
    address(bob.publicKey()),
    i128(5n * USDC),
  );
  const tx = txWithAuth(relayerAccount, bigger, [signed], sim);
  tx.sign(relayer);
  const { final } = await submit(server, tx);
  t.is(final?.status, rpc.Api.GetTransactionStatus.FAILED);
  t.deepEqual(await balances(alice.publicKey(), bob.publicKey()), [10n * USDC, 0n]);
});

test('insufficient balance fails in simulation (Error(Contract, #10)) and on the ledger', async (t) => {
  const alice = await newAccount('1');
  const bob = await newAccount();
  const account = await server.getAccount(alice.publicKey());
  const sim = await server.simulateTransaction(
    invokeTx(copy(account), token, 'transfer', [
      address(alice.publicKey()),
      address(bob.publicKey()),
      i128(2n * USDC),
    ]),
  );
  t.true(rpc.Api.isSimulationError(sim) && sim.error.includes('Error(Contract, #10)'));
  // submit anyway with the footprint of a smaller transfer
  const small = await server.simulateTransaction(
    invokeTx(copy(account), token, 'transfer', [
      address(alice.publicKey()),
      address(bob.publicKey()),
      i128(1n),
    ]),
  );
  if (!rpc.Api.isSimulationSuccess(small)) return t.fail(small.error);
  const call = new Contract(token).call(
    'transfer',
    address(alice.publicKey()),
    address(bob.publicKey()),
    i128(2n * USDC),
  );
  const tx = txWithAuth(account, call, small.result!.auth, small);
  tx.sign(alice);
  const { final } = await submit(server, tx);
  t.is(final?.status, rpc.Api.GetTransactionStatus.FAILED);
  if (final?.status === rpc.Api.GetTransactionStatus.FAILED) {
    t.is(final.resultXdr.result.type, 'txFailed');
    t.true(final.diagnosticEventsXdr?.some((e) => e.toXdr('base64').length > 0));
  }
  t.deepEqual(await balances(alice.publicKey(), bob.publicKey()), [USDC, 0n]);
});

test('unknown contracts, unknown functions, wrong argument types and negative amounts are refused', async (t) => {
  const alice = await newAccount('1');
  const account = await server.getAccount(alice.publicKey());
  const sim = async (contract: string, fn: string, args: xdr.ScVal[]) =>
    server.simulateTransaction(invokeTx(copy(account), contract, fn, args));
  const ghost = StrKey.encodeContract(Buffer.alloc(32, 7));
  const r1 = await sim(ghost, 'balance', [address(alice.publicKey())]);
  t.true(rpc.Api.isSimulationError(r1) && r1.error.includes('Error(Storage, MissingValue)'));
  // the host's built-in Stellar Asset Contract has no such function: an invalid input, not a VM error
  const r2 = await sim(token, 'steal', []);
  t.true(rpc.Api.isSimulationError(r2) && r2.error.includes('Error(Value, InvalidInput)'));
  const r3 = await sim(token, 'transfer', [
    address(alice.publicKey()),
    address(alice.publicKey()),
    xdr.ScVal.scvU32(5),
  ]);
  t.true(rpc.Api.isSimulationError(r3) && r3.error.includes('Error(Value, UnexpectedType)'));
  const r4 = await sim(token, 'transfer', [
    address(alice.publicKey()),
    address(alice.publicKey()),
    i128(-5n),
  ]);
  t.true(rpc.Api.isSimulationError(r4) && r4.error.includes('Error(Contract, #8)'));
  const r5 = await sim(token, 'balance', []);
  t.true(rpc.Api.isSimulationError(r5));
  await t.throwsAsync(server.prepareTransaction(invokeTx(copy(account), token, 'steal', [])));
});

test('minting needs the admin: an unauthorised mint fails on the ledger', async (t) => {
  const mallory = await newAccount();
  const account = await server.getAccount(mallory.publicKey());
  const call = [address(mallory.publicKey()), i128(1000n * USDC)];
  const enforced = await server.simulateTransaction(
    invokeTx(copy(account), token, 'mint', call),
    undefined,
    'enforce',
  );
  t.true(rpc.Api.isSimulationError(enforced) && enforced.error.includes('Error(Auth, InvalidAction)'));
  // recording mode asks for the admin's signature; sending the unsigned entry fails
  const recorded = await server.simulateTransaction(invokeTx(copy(account), token, 'mint', call));
  if (!rpc.Api.isSimulationSuccess(recorded)) return t.fail(recorded.error);
  const entry = recorded.result!.auth[0] as xdr.SorobanAuthorizationEntry;
  t.is(entry.credentials.type, 'sorobanCredentialsAddressV2');
  const tx = txWithAuth(account, new Contract(token).call('mint', ...call), [entry], recorded);
  tx.sign(mallory);
  const { final } = await submit(server, tx);
  t.is(final?.status, rpc.Api.GetTransactionStatus.FAILED);
  t.deepEqual(await balances(mallory.publicKey()), [0n]);
});

test('touching a ledger entry outside the declared footprint fails the transaction', async (t) => {
  const alice = await newAccount('3');
  const bob = await newAccount();
  const account = await server.getAccount(alice.publicKey());
  // footprint of a transfer to someone else: bob's balance entry is not in it
  const other = await server.simulateTransaction(
    invokeTx(copy(account), token, 'transfer', [
      address(alice.publicKey()),
      address((await newAccount()).publicKey()),
      i128(1n),
    ]),
  );
  if (!rpc.Api.isSimulationSuccess(other)) return t.fail(other.error);
  const call = new Contract(token).call(
    'transfer',
    address(alice.publicKey()),
    address(bob.publicKey()),
    i128(1n),
  );
  const tx = txWithAuth(account, call, other.result!.auth, other);
  tx.sign(alice);
  const { final } = await submit(server, tx);
  t.is(final?.status, rpc.Api.GetTransactionStatus.FAILED);
  t.deepEqual(await balances(alice.publicKey(), bob.publicKey()), [3n * USDC, 0n]);
});

test('allowances: approve then transfer_from by the spender, bounded by the allowance', async (t) => {
  const alice = await newAccount('10');
  const spender = await newAccount();
  const bob = await newAccount();
  const latest = (await server.getLatestLedger()).sequence;
  const aliceAccount = await server.getAccount(alice.publicKey());
  const approve = await server.prepareTransaction(
    invokeTx(aliceAccount, token, 'approve', [
      address(alice.publicKey()),
      address(spender.publicKey()),
      i128(3n * USDC),
      xdr.ScVal.scvU32(latest + 1000),
    ]),
  );
  approve.sign(alice);
  t.is((await submit(server, approve)).final?.status, rpc.Api.GetTransactionStatus.SUCCESS);
  const spenderAccount = await server.getAccount(spender.publicKey());
  const args = (n: bigint) => [
    address(spender.publicKey()),
    address(alice.publicKey()),
    address(bob.publicKey()),
    i128(n),
  ];
  const tooMuch = await server.simulateTransaction(
    invokeTx(copy(spenderAccount), token, 'transfer_from', args(4n * USDC)),
  );
  t.true(rpc.Api.isSimulationError(tooMuch) && tooMuch.error.includes('Error(Contract, #9)'));
  const pull = await server.prepareTransaction(
    invokeTx(spenderAccount, token, 'transfer_from', args(2n * USDC)),
  );
  pull.sign(spender);
  t.is((await submit(server, pull)).final?.status, rpc.Api.GetTransactionStatus.SUCCESS);
  t.deepEqual(await balances(alice.publicKey(), bob.publicKey()), [8n * USDC, 2n * USDC]);
});
