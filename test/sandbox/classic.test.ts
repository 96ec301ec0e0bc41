// USDC as a classic asset on the sandbox, through the SDK as an app would use it: createAccount, payment
// (XLM and USDC) and changeTrust with exact balances and stellar-core's result codes for bad ones
// (underfunded, no trust, low reserve), all-or-nothing transactions, the SAC reading and moving trustline
// balances (TrustlineMissingError without one), friendbot's trustlines, and unsupported operations refused
// with a result code and a diagnostic message.
import {
  Asset,
  Keypair,
  Operation,
  rpc,
  scValToNative,
  TransactionBuilder,
  type Transaction,
  xdr,
} from '#stellar-sdk';
import test from 'ava';
import type { PoolSandbox } from '../../src/deploy/sandbox-network.ts';
import { contractErrorOf } from '../../src/ledger/contract-errors.ts';
import { STANDALONE_PASSPHRASE } from '../../src/ledger/networks.ts';
import { address, fund, i128, invokeTx, startSandbox, submit, tokenBalance } from './helpers.ts';

let sandbox: PoolSandbox;
let server: rpc.Server;
let usdc: Asset;

test.before(async () => {
  ({ sandbox, server } = await startSandbox());
  usdc = new Asset('USDC', sandbox.info.accounts.admin);
});
test.after.always(() => sandbox?.close());

const XLM = 10_000_000n;

async function funded(usdcAmount?: string): Promise<Keypair> {
  const kp = Keypair.random();
  const res = await fund(sandbox, kp.publicKey(), usdcAmount);
  if (res.status !== 200) throw new Error(await res.text());
  return kp;
}

async function classic(source: Keypair, ...ops: xdr.Operation[]): Promise<Transaction> {
  let builder = new TransactionBuilder(await server.getAccount(source.publicKey()), {
    fee: '100',
    networkPassphrase: STANDALONE_PASSPHRASE,
  });
  for (const op of ops) builder = builder.addOperation(op);
  const tx = builder.setTimeout(60).build();
  tx.sign(source);
  return tx;
}

const lumens = async (who: string) =>
  BigInt((await server.getAccountEntry(who)).balance as unknown as bigint);
/** The account's USDC trustline balance in stroops, as rpc.Server.getAssetBalance reads it. */
const usdcOf = async (who: string) =>
  BigInt((await server.getAssetBalance(who, usdc)).balanceEntry?.amount ?? '0');

/** The operation result codes of a landed transaction. */
function opCodes(final: rpc.Api.GetTransactionResponse): string[] {
  if (final.status === rpc.Api.GetTransactionStatus.NOT_FOUND) return [];
  const results = (final.resultXdr.result.value ?? []) as xdr.OperationResult[];
  return results.map((r) => {
    const tr = r.value as { value?: { type?: string } } | undefined;
    return tr?.value?.type ?? r.type;
  });
}

test('createAccount, XLM payment and changeTrust apply with exact balances and fees', async (t) => {
  const alice = await funded();
  const bob = Keypair.random();
  const before = await lumens(alice.publicKey());
  const { final } = await submit(
    server,
    await classic(alice, Operation.createAccount({ destination: bob.publicKey(), startingBalance: '25' })),
  );
  t.is(final?.status, rpc.Api.GetTransactionStatus.SUCCESS);
  if (final) t.deepEqual(opCodes(final), ['createAccountSuccess']);
  t.is(await lumens(bob.publicKey()), 25n * XLM);
  t.is(await lumens(alice.publicKey()), before - 25n * XLM - 100n);

  // two operations, one fee each
  const pay = await submit(
    server,
    await classic(
      bob,
      Operation.payment({ destination: alice.publicKey(), asset: Asset.native(), amount: '2.5' }),
      Operation.changeTrust({ asset: usdc }),
    ),
  );
  t.is(pay.final?.status, rpc.Api.GetTransactionStatus.SUCCESS);
  if (pay.final) t.deepEqual(opCodes(pay.final), ['paymentSuccess', 'changeTrustSuccess']);
  t.is(await lumens(bob.publicKey()), 25n * XLM - 25_000_000n - 200n);
  const entry = await server.getAccountEntry(bob.publicKey());
  t.is(Number(entry.numSubEntries), 1, 'the trustline is a sub-entry');
  t.is(await usdcOf(bob.publicKey()), 0n);
});

test('USDC moves between trustlines by classic payment and by the SAC, which agree', async (t) => {
  const alice = await funded('50');
  const bob = await funded(); // friendbot gives every account a USDC trustline
  t.is(await usdcOf(bob.publicKey()), 0n);
  const { final } = await submit(
    server,
    await classic(alice, Operation.payment({ destination: bob.publicKey(), asset: usdc, amount: '12.5' })),
  );
  t.is(final?.status, rpc.Api.GetTransactionStatus.SUCCESS);
  t.is(await usdcOf(alice.publicKey()), 375_000_000n);
  t.is(await usdcOf(bob.publicKey()), 125_000_000n);
  const token = sandbox.info.contracts.token;
  t.is(await tokenBalance(server, token, bob.publicKey()), 125_000_000n, 'the SAC reads the trustline');

  // the SAC's transfer moves the same trustline balances, with the SEP-41 event the x402 facilitator checks
  const tx = await server.prepareTransaction(
    invokeTx(await server.getAccount(bob.publicKey()), token, 'transfer', [
      address(bob.publicKey()),
      address(alice.publicKey()),
      i128(25_000_000n),
    ]),
  );
  tx.sign(bob);
  const sent = await submit(server, tx);
  t.is(sent.final?.status, rpc.Api.GetTransactionStatus.SUCCESS);
  t.is(await usdcOf(bob.publicKey()), 100_000_000n);
  t.is(await usdcOf(alice.publicKey()), 400_000_000n);
  if (sent.final?.status === rpc.Api.GetTransactionStatus.SUCCESS) {
    const [ev] = sent.final.events.contractEventsXdr[0] ?? [];
    const body = ev?.body.value as xdr.ContractEventV0;
    t.deepEqual(
      body.topics.map((x) => scValToNative(x)),
      ['transfer', bob.publicKey(), alice.publicKey(), `USDC:${sandbox.info.accounts.admin}`],
    );
    t.is(body.data.type, 'scvI128');
  }

  // the genesis operator and pool wallet hold USDC trustlines too
  for (const who of [sandbox.info.accounts.operator, sandbox.info.accounts.poolWallet]) {
    t.is(await tokenBalance(server, token, who), 0n);
  }
});

test('bad classic operations fail with stellar-core result codes and change nothing but fee and sequence', async (t) => {
  const alice = await funded('5');
  const stranger = Keypair.random();
  const noTrust = Keypair.random();
  await submit(
    server,
    await classic(
      alice,
      Operation.createAccount({ destination: noTrust.publicKey(), startingBalance: '1.4' }),
    ),
  );
  const cases: [string, () => Promise<Transaction>, string[]][] = [
    [
      'underfunded createAccount',
      () =>
        classic(
          alice,
          Operation.createAccount({ destination: stranger.publicKey(), startingBalance: '20000' }),
        ),
      ['createAccountUnderfunded'],
    ],
    [
      'createAccount below the reserve',
      () =>
        classic(
          alice,
          Operation.createAccount({ destination: stranger.publicKey(), startingBalance: '0.5' }),
        ),
      ['createAccountLowReserve'],
    ],
    [
      'createAccount of an existing account',
      () =>
        classic(alice, Operation.createAccount({ destination: noTrust.publicKey(), startingBalance: '2' })),
      ['createAccountAlreadyExist'],
    ],
    [
      'USDC to an account without a trustline',
      () => classic(alice, Operation.payment({ destination: noTrust.publicKey(), asset: usdc, amount: '1' })),
      ['paymentNoTrust'],
    ],
    [
      'more USDC than the trustline holds',
      () =>
        classic(
          alice,
          Operation.payment({ destination: sandbox.info.accounts.operator, asset: usdc, amount: '6' }),
        ),
      ['paymentUnderfunded'],
    ],
    [
      'XLM to an account that does not exist',
      () =>
        classic(
          alice,
          Operation.payment({ destination: stranger.publicKey(), asset: Asset.native(), amount: '1' }),
        ),
      ['paymentNoDestination'],
    ],
    [
      'a trustline the reserve cannot cover',
      () => classic(noTrust, Operation.changeTrust({ asset: usdc })),
      ['changeTrustLowReserve'],
    ],
    [
      'a good payment then a bad one: all or nothing',
      () =>
        classic(
          alice,
          Operation.payment({ destination: sandbox.info.accounts.operator, asset: usdc, amount: '1' }),
          Operation.payment({ destination: noTrust.publicKey(), asset: usdc, amount: '1' }),
        ),
      ['paymentSuccess', 'paymentNoTrust'],
    ],
  ];
  for (const [name, build, codes] of cases) {
    const who = name.includes('reserve cannot') ? noTrust : alice;
    const xlmBefore = await lumens(who.publicKey());
    const usdcBefore = await usdcOf(alice.publicKey());
    const tx = await build();
    const { final } = await submit(server, tx);
    t.is(final?.status, rpc.Api.GetTransactionStatus.FAILED, name);
    if (final) t.deepEqual(opCodes(final), codes, name);
    t.is(
      await lumens(who.publicKey()),
      xlmBefore - 100n * BigInt(tx.operations.length),
      `${name}: only the fee`,
    );
    t.is(await usdcOf(alice.publicKey()), usdcBefore, `${name}: no USDC moved`);
  }
});

test('the SAC refuses to pay an account without a trustline (TrustlineMissingError #13)', async (t) => {
  const alice = await funded('5');
  const bare = Keypair.random();
  await submit(
    server,
    await classic(alice, Operation.createAccount({ destination: bare.publicKey(), startingBalance: '5' })),
  );
  const sim = await server.simulateTransaction(
    invokeTx(await server.getAccount(alice.publicKey()), sandbox.info.contracts.token, 'transfer', [
      address(alice.publicKey()),
      address(bare.publicKey()),
      i128(1n),
    ]),
  );
  t.true(rpc.Api.isSimulationError(sim));
  const err = contractErrorOf(sim, sandbox.info.contracts);
  t.deepEqual([err?.contract, err?.name, err?.code], ['token', 'TrustlineMissingError', 13]);
});

test('unsupported operations are refused with txNotSupported and a diagnostic message', async (t) => {
  const alice = await funded();
  const before = await server.getAccount(alice.publicKey());
  for (const [op, name] of [
    [Operation.manageData({ name: 'k', value: 'v' }), 'manageData'],
    [Operation.setOptions({ homeDomain: 'example.com' }), 'setOptions'],
  ] as const) {
    const sent = await server.sendTransaction(await classic(alice, op));
    t.is(sent.status, 'ERROR');
    t.is(sent.errorResult?.result.type, 'txNotSupported');
    const messages = (sent.diagnosticEvents ?? []).map((d) =>
      scValToNative((d.event.body.value as xdr.ContractEventV0).data),
    );
    t.true(
      messages.some((m) => String(m).includes(name) && String(m).includes('not supported')),
      JSON.stringify(messages),
    );
  }
  t.is(
    (await server.getAccount(alice.publicKey())).sequenceNumber(),
    before.sequenceNumber(),
    'nothing applied',
  );
});
