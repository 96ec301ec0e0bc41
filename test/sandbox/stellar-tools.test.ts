// The sandbox as Stellar tools read it, checked with @stellar/stellar-sdk the way a client reads it:
// diagnostic events of successful simulations (fn_call / fn_return around the contract events), the SAC
// `transfer` event of a classic USDC payment (CAP-67), operations with their own source account, and the
// LedgerCloseMeta of getLedgers / getLatestLedger with each ledger's transactions and their results.
import {
  Address,
  Asset,
  hash,
  humanizeEvents,
  Keypair,
  Networks,
  Operation,
  rpc,
  scValToNative,
  TransactionBuilder,
  xdr,
} from '#stellar-sdk';
import test from 'ava';
import type { PoolSandbox } from '../../src/deploy/sandbox-network.ts';
import { PUBLIC_PASSPHRASE, STANDALONE_PASSPHRASE, TESTNET_PASSPHRASE } from '../../src/ledger/networks.ts';
import { address, fund, i128, invokeTx, startSandbox, submit } from './helpers.ts';

let sandbox: PoolSandbox;
let server: rpc.Server;
let token: string;

test.before(async () => {
  ({ sandbox, server } = await startSandbox());
  token = sandbox.info.contracts.token;
});
test.after.always(() => sandbox?.close());

test("our network passphrases are the SDK's", (t) => {
  t.deepEqual(
    [STANDALONE_PASSPHRASE, TESTNET_PASSPHRASE, PUBLIC_PASSPHRASE],
    [Networks.STANDALONE, Networks.TESTNET, Networks.PUBLIC],
  );
});

test('a successful simulation returns its diagnostic trace: fn_call, the contract event, fn_return', async (t) => {
  const from = Keypair.random();
  const to = Keypair.random().publicKey();
  t.true((await fund(sandbox, from.publicKey(), '5')).ok);
  t.true((await fund(sandbox, to)).ok);
  const sim = await server.simulateTransaction(
    invokeTx(await server.getAccount(from.publicKey()), token, 'transfer', [
      address(from.publicKey()),
      address(to),
      i128(1_000n),
    ]),
  );
  if (!rpc.Api.isSimulationSuccess(sim)) return t.fail(sim.error);
  t.true(sim.events.every((e) => e.inSuccessfulContractCall));
  const events = humanizeEvents(sim.events);
  t.deepEqual(
    events.map((e) => [e.type, e.topics[0]]),
    [
      ['diagnostic', 'fn_call'],
      ['contract', 'transfer'],
      ['diagnostic', 'fn_return'],
    ],
  );
  const [call, transfer, ret] = events as [(typeof events)[0], (typeof events)[0], (typeof events)[0]];
  // fn_call: from the caller's frame (none: the transaction's root call), [fn_call, callee id, function]
  t.is(call.contractId, undefined);
  t.is(
    Buffer.from(call.topics[1] as Uint8Array).toString('hex'),
    Buffer.from(Address.fromString(token).toBuffer()).toString('hex'),
  );
  t.is(call.topics[2], 'transfer');
  t.deepEqual(call.data, [from.publicKey(), to, 1_000n]);
  t.is(transfer.contractId, token);
  t.deepEqual(transfer.topics.slice(1, 3), [from.publicKey(), to]);
  // fn_return: from the callee's frame, [fn_return, function], the return value (void)
  t.is(ret.contractId, token);
  t.is(ret.topics[1], 'transfer');
  t.is(ret.data, null);
  // a read-only call returns its value in fn_return
  const balance = await server.simulateTransaction(
    invokeTx(await server.getAccount(from.publicKey()), token, 'balance', [address(to)]),
  );
  if (!rpc.Api.isSimulationSuccess(balance)) return t.fail(balance.error);
  const trace = humanizeEvents(balance.events);
  t.deepEqual(
    trace.map((e) => e.topics[0]),
    ['fn_call', 'fn_return'],
  );
  t.is(trace[1]!.data, 0n);
  t.is(scValToNative(balance.result!.retval), 0n);
});

/** The operation result codes of a landed transaction (the arm's name, or the operation's result code). */
function opCodes(final: rpc.Api.GetTransactionResponse): string[] {
  if (final.status === rpc.Api.GetTransactionStatus.NOT_FOUND) return [];
  const results = (final.resultXdr.result.value ?? []) as xdr.OperationResult[];
  return results.map((r) => {
    const tr = r.value as { type?: string } | undefined;
    return tr?.type ?? r.type;
  });
}

async function funded(usdc?: string): Promise<Keypair> {
  const kp = Keypair.random();
  const res = await fund(sandbox, kp.publicKey(), usdc);
  if (!res.ok) throw new Error(await res.text());
  return kp;
}

function build(source: Awaited<ReturnType<rpc.Server['getAccount']>>, ...ops: xdr.Operation[]) {
  let builder = new TransactionBuilder(source, { fee: '1000', networkPassphrase: STANDALONE_PASSPHRASE });
  for (const op of ops) builder = builder.addOperation(op);
  return builder.setTimeout(60).build();
}

test('a classic USDC payment emits the SAC transfer event (CAP-67), read by getTransaction and getEvents', async (t) => {
  const usdc = new Asset('USDC', sandbox.info.accounts.admin);
  t.is(usdc.contractId(STANDALONE_PASSPHRASE), token);
  const alice = await funded('3');
  const bob = await funded();
  const tx = build(
    await server.getAccount(alice.publicKey()),
    Operation.payment({ destination: bob.publicKey(), asset: usdc, amount: '1.25' }),
    Operation.payment({ destination: bob.publicKey(), asset: Asset.native(), amount: '2' }),
  );
  tx.sign(alice);
  const { final } = await submit(server, tx);
  if (final?.status !== rpc.Api.GetTransactionStatus.SUCCESS) return t.fail(JSON.stringify(final));
  // per operation, as the SDK parses getTransaction's events
  const perOp = final.events.contractEventsXdr.map((evs) => humanizeEvents(evs));
  t.is(perOp.length, 2);
  t.like(perOp[0]![0], {
    type: 'contract',
    contractId: token,
    topics: ['transfer', alice.publicKey(), bob.publicKey(), `USDC:${sandbox.info.accounts.admin}`],
    data: 12_500_000n,
  });
  t.like(perOp[1]![0], {
    contractId: Asset.native().contractId(STANDALONE_PASSPHRASE),
    topics: ['transfer', alice.publicKey(), bob.publicKey(), 'native'],
    data: 20_000_000n,
  });
  // the same in the meta's operations, and found by getEvents as SAC transfers are
  const meta = final.resultMetaXdr.value as xdr.TransactionMetaV4;
  t.is(meta.operations[0]!.events.length, 1);
  const found = await server.getEvents({
    startLedger: final.ledger,
    filters: [
      {
        type: 'contract',
        contractIds: [token],
        topics: [['AAAADwAAAAh0cmFuc2Zlcg==', '*', '*', '*']],
      },
    ],
  });
  const ours = found.events.filter((e) => e.txHash === final.txHash);
  t.is(ours.length, 1);
  t.is(ours[0]!.operationIndex, 0);
  t.is(scValToNative(ours[0]!.value), 12_500_000n);
  // paying from the issuer mints; to the issuer burns
  const admin = Keypair.fromSecret(sandbox.secrets().admin);
  const mint = build(
    await server.getAccount(admin.publicKey()),
    Operation.payment({ destination: bob.publicKey(), asset: usdc, amount: '1' }),
  );
  mint.sign(admin);
  const minted = (await submit(server, mint)).final as rpc.Api.GetSuccessfulTransactionResponse;
  t.deepEqual(humanizeEvents(minted.events.contractEventsXdr[0]!)[0]!.topics, [
    'mint',
    bob.publicKey(),
    `USDC:${admin.publicKey()}`,
  ]);
});

test('operations with their own source account: a funder creates an account that opens a trustline and is paid, in one transaction', async (t) => {
  const usdc = new Asset('USDC', sandbox.info.accounts.admin);
  const funder = await funded('4');
  const fresh = Keypair.random();
  const tx = build(
    await server.getAccount(funder.publicKey()),
    Operation.createAccount({ destination: fresh.publicKey(), startingBalance: '5' }),
    Operation.changeTrust({ asset: usdc, source: fresh.publicKey() }),
    Operation.payment({ destination: fresh.publicKey(), asset: usdc, amount: '2' }),
  );
  // signed by the funder only: the new account's operation is not authorized
  tx.sign(funder);
  const unsigned = await server.sendTransaction(tx);
  t.is(unsigned.status, 'ERROR');
  t.is(unsigned.errorResult?.result.type, 'txBadAuth');
  tx.sign(fresh);
  const { final } = await submit(server, tx);
  if (final?.status !== rpc.Api.GetTransactionStatus.SUCCESS) return t.fail(JSON.stringify(final));
  t.deepEqual(opCodes(final), ['createAccount', 'changeTrust', 'payment']);
  const balance = await server.getAssetBalance(fresh.publicKey(), usdc);
  t.is(balance.balanceEntry?.amount, '20000000');
  t.is((await server.getAccount(fresh.publicKey())).sequenceNumber(), `${BigInt(final.ledger) << 32n}`);
  // an operation source that does not exist fails its operation (opNoAccount), nothing applies
  const ghost = Keypair.random();
  const bad = build(
    await server.getAccount(funder.publicKey()),
    Operation.payment({
      destination: fresh.publicKey(),
      asset: usdc,
      amount: '1',
      source: ghost.publicKey(),
    }),
  );
  bad.sign(funder, ghost);
  const failed = (await submit(server, bad)).final;
  t.is(failed?.status, rpc.Api.GetTransactionStatus.FAILED);
  const codes = opCodes(failed as rpc.Api.GetTransactionResponse);
  t.deepEqual(codes, ['opNoAccount']);
  t.is((await server.getAssetBalance(fresh.publicKey(), usdc)).balanceEntry?.amount, '20000000');
});

test('getLedgers and getLatestLedger give LedgerCloseMeta v2 with the transaction set and each result', async (t) => {
  const alice = await funded('2');
  const bob = await funded();
  const usdc = new Asset('USDC', sandbox.info.accounts.admin);
  const classicTx = build(
    await server.getAccount(alice.publicKey()),
    Operation.payment({ destination: bob.publicKey(), asset: usdc, amount: '1' }),
  );
  classicTx.sign(alice);
  const { final } = await submit(server, classicTx);
  if (final?.status !== rpc.Api.GetTransactionStatus.SUCCESS) return t.fail(JSON.stringify(final));
  const page = await server.getLedgers({ startLedger: final.ledger, pagination: { limit: 1 } });
  const ledger = page.ledgers[0]!;
  t.is(ledger.sequence, final.ledger);
  const meta = ledger.metadataXdr;
  t.is(meta.type, 'v2');
  const v2 = meta.value as xdr.LedgerCloseMetaV2;
  t.is(v2.ledgerHeader.header.ledgerSeq, final.ledger);
  // the transaction set: our envelope in the classic phase; its hash is the header's txSetHash
  const set = v2.txSet.value as xdr.TransactionSetV1;
  const classicPhase = set.phases[0]!.value as xdr.TxSetComponent[];
  const envelopes = classicPhase.flatMap((c) => (c.value as xdr.TxSetComponentTxsMaybeDiscountedFee).txs);
  t.true(envelopes.some((e) => e.toXdr('base64') === classicTx.toEnvelope().toXdr('base64')));
  t.is(
    Buffer.from(rawBytesOf(v2.ledgerHeader.header.scpValue.txSetHash)).toString('hex'),
    Buffer.from(hash(v2.txSet.toXdr())).toString('hex'),
  );
  // each transaction's result and apply meta, as getTransaction has them
  const processed = v2.txProcessing.find(
    (p) => Buffer.from(rawBytesOf(p.result.transactionHash)).toString('hex') === final.txHash,
  );
  t.truthy(processed, 'our transaction is in txProcessing');
  t.is(processed!.result.result.result.type, 'txSuccess');
  t.is(processed!.txApplyProcessing.toXdr('base64'), final.resultMetaXdr.toXdr('base64'));
  // a Soroban transaction lands in the Soroban phase
  const sac = invokeTx(await server.getAccount(alice.publicKey()), token, 'transfer', [
    address(alice.publicKey()),
    address(bob.publicKey()),
    i128(1n),
  ]);
  const sim = await server.simulateTransaction(sac);
  if (!rpc.Api.isSimulationSuccess(sim)) return t.fail(sim.error);
  const assembled = rpc.assembleTransaction(sac, sim).build();
  assembled.sign(alice);
  const landed = (await submit(server, assembled)).final as rpc.Api.GetSuccessfulTransactionResponse;
  const latest = await server.getLatestLedger();
  t.true(latest.sequence >= landed.ledger);
  const sorobanLedger = (await server.getLedgers({ startLedger: landed.ledger, pagination: { limit: 1 } }))
    .ledgers[0]!.metadataXdr.value as xdr.LedgerCloseMetaV2;
  const stages = (sorobanLedger.txSet.value as xdr.TransactionSetV1).phases[1]!
    .value as xdr.ParallelTxsComponent;
  t.true(
    stages.executionStages.flat(2).some((e) => e.toXdr('base64') === assembled.toEnvelope().toXdr('base64')),
  );
  // getLatestLedger's metadata parses as v2 too
  const raw = (await (
    await fetch(sandbox.rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getLatestLedger' }),
    })
  ).json()) as { result: { metadataXdr: string } };
  t.is(xdr.LedgerCloseMeta.fromXdr(raw.result.metadataXdr, 'base64').type, 'v2');
});

function rawBytesOf(v: unknown): Uint8Array {
  if (v instanceof Uint8Array) return v;
  return (v as { value: Uint8Array }).value;
}
