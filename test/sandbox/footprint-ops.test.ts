// ExtendFootprintTTL and RestoreFootprint through the sandbox's RPC, sent the way the official `stellar` CLI
// sends `stellar contract extend` and `stellar contract restore` (a transaction whose Soroban data names the
// footprint, simulated, assembled with the simulation's data and fee, signed, sent, then followed with
// getTransaction and getLedgerEntries), and what they change: TTLs, fees and refunds, the meta the CLI
// reads the new TTL from. Also: the ledger advanced past a TTL archives the entry, an extension of an archived
// entry gets a restore preamble (which the proxy's chain client sends), malformed footprints are refused at
// submission, and simulation honours stellar-rpc's `instructionLeeway`.
import test from 'ava';
import {
  Account,
  Address,
  Keypair,
  Operation,
  rpc,
  SorobanDataBuilder,
  TransactionBuilder,
  xdr,
} from '#stellar-sdk';
import { ChainClient } from '../../src/proxy/services/chain-client.ts';
import { rawBytes } from '../../src/sandbox/keys.ts';
import { STANDALONE_PASSPHRASE } from '../../src/ledger/networks.ts';
import type { PoolSandbox } from '../../src/deploy/sandbox-network.ts';
import { fund, invokeTx, startSandbox, submit } from './helpers.ts';

let sandbox: PoolSandbox;
let server: rpc.Server;
test.before(async () => {
  ({ sandbox, server } = await startSandbox({ ledgerMs: 20 }));
});
test.after.always(async () => {
  await sandbox?.close();
});

/** A contract's instance entry (persistent). */
const instanceKey = (contractId: string) =>
  xdr.LedgerKey.contractData(
    new xdr.LedgerKeyContractData({
      contract: new Address(contractId).toScAddress(),
      key: xdr.ScVal.scvLedgerKeyContractInstance(),
      durability: xdr.ContractDataDurability.persistent,
    }),
  );

async function liveUntil(key: xdr.LedgerKey): Promise<number> {
  const { entries } = await server.getLedgerEntries(key);
  const found = entries[0];
  if (!found?.liveUntilLedgerSeq) throw new Error('entry not found');
  return found.liveUntilLedgerSeq;
}

async function fundedAccount(): Promise<Keypair> {
  const kp = Keypair.random();
  const res = await fund(sandbox, kp.publicKey());
  if (!res.ok) throw new Error(await res.text());
  return kp;
}

/**
 * The transaction `stellar contract extend|restore` builds before simulating it: the operation and Soroban
 * data naming the keys (read-only to extend, read-write to restore), no resources and no resource fee yet.
 */
async function cliTransaction(
  source: Keypair,
  op: xdr.Operation,
  footprint: { readOnly?: xdr.LedgerKey[]; readWrite?: xdr.LedgerKey[] },
) {
  const account = await server.getAccount(source.publicKey());
  const data = new SorobanDataBuilder()
    .setReadOnly(footprint.readOnly ?? [])
    .setReadWrite(footprint.readWrite ?? [])
    .build();
  return new TransactionBuilder(account, { fee: '100', networkPassphrase: STANDALONE_PASSPHRASE })
    .setSorobanData(data)
    .addOperation(op)
    .setTimeout(60)
    .build();
}

/** Simulates, assembles, signs and sends as the CLI does; the final getTransaction answer. */
async function simulateAndSend(source: Keypair, tx: Awaited<ReturnType<typeof cliTransaction>>) {
  const sim = await server.simulateTransaction(tx);
  if (!rpc.Api.isSimulationSuccess(sim)) throw new Error(`simulation failed: ${JSON.stringify(sim)}`);
  const assembled = rpc.assembleTransaction(tx, sim).build();
  assembled.sign(source);
  const { sent, final } = await submit(server, assembled);
  return { sim, sent, final };
}

/** The code of a transaction's single operation result. */
function opResultCode(result: xdr.TransactionResult | undefined): string | undefined {
  const ops = result?.result.value as xdr.OperationResult[] | undefined;
  const tr = ops?.[0]?.value as { value?: { type?: string } } | undefined;
  return tr?.value?.type;
}

/** The operation's ledger entry changes in a transaction's meta. */
function opChanges(final: rpc.Api.GetTransactionResponse): xdr.LedgerEntryChange[] {
  if (final.status !== rpc.Api.GetTransactionStatus.SUCCESS) throw new Error(`status ${final.status}`);
  const meta = final.resultMetaXdr.value as xdr.TransactionMetaV4;
  return meta.operations[0]?.changes ?? [];
}

test.serial(
  'stellar contract extend: simulated without results, applied, TTL and meta as on testnet',
  async (t) => {
    const source = await fundedAccount();
    const key = instanceKey(sandbox.info.contracts.token);
    const before = await liveUntil(key);
    const latest = (await server.getLatestLedger()).sequence;
    const extendTo = before - latest + 10_000;
    const tx = await cliTransaction(source, Operation.extendFootprintTtl({ extendTo }), { readOnly: [key] });

    const raw = await server._simulateTransaction(tx);
    t.truthy(raw.transactionData);
    t.true(BigInt(raw.minResourceFee ?? '0') > 0n);
    t.is(raw.results, undefined, 'no invocation, no results');
    t.is(raw.restorePreamble, undefined);

    const { sent, final } = await simulateAndSend(source, tx);
    t.is(sent.status, 'PENDING');
    t.is(final?.status, rpc.Api.GetTransactionStatus.SUCCESS);
    if (final?.status !== rpc.Api.GetTransactionStatus.SUCCESS) return;
    t.is(await liveUntil(key), final.ledger + extendTo);
    // the CLI reads the new TTL from the operation's updated TTL entry
    const updated = opChanges(final).filter((c) => c.type === 'ledgerEntryUpdated');
    t.is(updated.length, 1);
    const ttl = (updated[0]?.value as xdr.LedgerEntry).data.value as xdr.TtlEntry;
    t.is(ttl.liveUntilLedgerSeq, final.ledger + extendTo);
    t.is(opResultCode(final.resultXdr), 'extendFootprintTtlSuccess');
    // rent was charged, and shows in the meta's fee parts
    const sorobanMeta = (final.resultMetaXdr.value as xdr.TransactionMetaV4).sorobanMeta;
    const ext = sorobanMeta?.ext.value as xdr.SorobanTransactionMetaExtV1;
    t.true(BigInt(ext.rentFeeCharged as unknown as bigint) > 0n);

    // extending again to a TTL it already has changes nothing and charges no rent
    const again = await cliTransaction(source, Operation.extendFootprintTtl({ extendTo: 100 }), {
      readOnly: [key],
    });
    const second = await simulateAndSend(source, again);
    t.is(second.final?.status, rpc.Api.GetTransactionStatus.SUCCESS);
    if (second.final?.status === rpc.Api.GetTransactionStatus.SUCCESS)
      t.deepEqual(opChanges(second.final), []);
  },
);

test.serial(
  'close meta records the fee taken, the sequence bump and the refund; the fee pool grows',
  async (t) => {
    const source = await fundedAccount();
    const key = instanceKey(sandbox.info.contracts.token);
    const extendTo = (await liveUntil(key)) - (await server.getLatestLedger()).sequence + 5_000;
    const tx = await cliTransaction(source, Operation.extendFootprintTtl({ extendTo }), { readOnly: [key] });
    const { final } = await simulateAndSend(source, tx);
    if (final?.status !== rpc.Api.GetTransactionStatus.SUCCESS) return t.fail(`status ${final?.status}`);
    const [before, closed] = (
      await server.getLedgers({ startLedger: final.ledger - 1, pagination: { limit: 2 } })
    ).ledgers;
    if (!before || !closed || closed.sequence !== final.ledger) return t.fail('ledgers not found');
    const meta = closed.metadataXdr.value as xdr.LedgerCloseMetaV2;
    const processed = meta.txProcessing.find(
      (p) => Buffer.from(rawBytes(p.result.transactionHash)).toString('hex') === final.txHash,
    );
    if (!processed) return t.fail('transaction not in the close meta');
    const balanceOf = (c: xdr.LedgerEntryChange | undefined) =>
      BigInt(((c?.value as xdr.LedgerEntry).data.value as xdr.AccountEntry).balance as unknown as bigint);
    const seqOf = (c: xdr.LedgerEntryChange | undefined) =>
      BigInt(((c?.value as xdr.LedgerEntry).data.value as xdr.AccountEntry).seqNum as unknown as bigint);
    const declared = BigInt(tx.fee);
    const [feeBefore, feeAfter] = processed.feeProcessing;
    t.is(feeBefore?.type, 'ledgerEntryState');
    t.is(feeAfter?.type, 'ledgerEntryUpdated');
    const taken = balanceOf(feeBefore) - balanceOf(feeAfter);
    t.true(taken > declared, 'the whole declared fee (resource fee included) is taken first');
    const [refundBefore, refundAfter] = processed.postTxApplyFeeProcessing;
    const refunded = balanceOf(refundAfter) - balanceOf(refundBefore);
    t.true(refunded > 0n, 'the unused refundable fee comes back after applying');
    const charged = BigInt(final.resultXdr.feeCharged as unknown as bigint);
    t.is(taken - refunded, charged);
    const applied = processed.txApplyProcessing.value as xdr.TransactionMetaV4;
    const [seqBefore, seqAfter] = applied.txChangesBefore;
    t.is(seqOf(seqAfter), seqOf(seqBefore) + 1n, 'the sequence number bump, before the operation');
    const pool = (l: typeof closed) => BigInt(l.headerXdr.header.feePool as unknown as bigint);
    t.true(pool(closed) - pool(before) >= charged, 'the fee pool keeps what was charged');
  },
);

test.serial('a footprint that does not fit the operation is refused at submission (MALFORMED)', async (t) => {
  const source = await fundedAccount();
  const key = instanceKey(sandbox.info.contracts.token);
  const sim = await server.simulateTransaction(
    await cliTransaction(source, Operation.extendFootprintTtl({ extendTo: 1000 }), { readOnly: [key] }),
  );
  if (!rpc.Api.isSimulationSuccess(sim)) throw new Error('simulation failed');
  // the simulated resources and fee, with the key moved to the read-write footprint
  const data = new SorobanDataBuilder(sim.transactionData.build().toXdr('base64'))
    .setReadOnly([])
    .setReadWrite([key])
    .build();
  const bad = new TransactionBuilder(await server.getAccount(source.publicKey()), {
    fee: (100n + BigInt(sim.minResourceFee)).toString(),
    networkPassphrase: STANDALONE_PASSPHRASE,
  })
    .setSorobanData(data)
    .addOperation(Operation.extendFootprintTtl({ extendTo: 1000 }))
    .setTimeout(60)
    .build();
  bad.sign(source);
  const sent = await server.sendTransaction(bad);
  t.is(sent.status, 'ERROR');
  t.is(opResultCode(sent.errorResult), 'extendFootprintTtlMalformed');
  t.is(sent.diagnosticEvents?.length, 1);
  // nothing was charged: the account's sequence number is unused
  const account = await server.getAccount(source.publicKey());
  t.is(account.sequenceNumber(), (BigInt(bad.sequence) - 1n).toString());
});

test.serial('simulateTransaction honours resourceConfig.instructionLeeway', async (t) => {
  const probe = new Account(Keypair.random().publicKey(), '0');
  const tx = invokeTx(probe, sandbox.info.contracts.token, 'decimals', []);
  const plain = await server._simulateTransaction(tx);
  const leeway = await server._simulateTransaction(tx, { cpuInstructions: 3_000_000 });
  const instructions = (r: typeof plain) =>
    xdr.SorobanTransactionData.fromXdr(r.transactionData as string, 'base64').resources.instructions;
  t.true(instructions(leeway) >= instructions(plain) + 2_900_000);
  t.true(instructions(leeway) < instructions(plain) + 3_100_000);
  // nonsense is refused
  const res = await fetch(sandbox.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'simulateTransaction',
      params: { transaction: tx.toXDR(), resourceConfig: { instructionLeeway: -1 } },
    }),
  });
  const body = (await res.json()) as { error?: { code: number } };
  t.is(body.error?.code, -32602);
});

test.serial(
  'advanced past its TTL an entry is archived; stellar contract restore brings it back',
  async (t) => {
    const source = await fundedAccount();
    const key = instanceKey(sandbox.info.contracts.verifier);
    const ttl = await liveUntil(key);
    const latest = (await server.getLatestLedger()).sequence;
    await sandbox.advanceLedgers(ttl - latest + 1);
    const now = (await server.getLatestLedger()).sequence;
    t.true(now > ttl, 'the ledger moved past the TTL');
    t.is(await liveUntil(key), ttl, 'the archived entry keeps its old TTL');
    // getLedgers steps over the ledgers the advance skipped
    const page = await server.getLedgers({ startLedger: latest, pagination: { limit: 5 } });
    t.true(page.ledgers.some((l) => l.sequence === now));

    const tx = await cliTransaction(source, Operation.restoreFootprint({}), { readWrite: [key] });
    const { final } = await simulateAndSend(source, tx);
    t.is(final?.status, rpc.Api.GetTransactionStatus.SUCCESS);
    if (final?.status !== rpc.Api.GetTransactionStatus.SUCCESS) return;
    const info = await sandbox.chain.host.info();
    t.is(await liveUntil(key), final.ledger + info.minPersistentTtl - 1);
    const restored = opChanges(final).filter((c) => c.type === 'ledgerEntryRestored');
    t.is(restored.length, 2, 'the entry and its TTL, as restored');
  },
);

test.serial(
  'extending an archived entry answers a restore preamble, which the proxy sends first',
  async (t) => {
    const source = await fundedAccount();
    const key = instanceKey(sandbox.info.contracts.asp_membership);
    const ttl = await liveUntil(key);
    await sandbox.advanceLedgers(Math.max(1, ttl - (await server.getLatestLedger()).sequence + 1));
    const tx = await cliTransaction(source, Operation.extendFootprintTtl({ extendTo: 1000 }), {
      readOnly: [key],
    });
    const sim = await server.simulateTransaction(tx);
    t.true(rpc.Api.isSimulationRestore(sim), 'the archived entry must be restored first');
    if (!rpc.Api.isSimulationRestore(sim)) return;
    t.true(BigInt(sim.restorePreamble.minResourceFee) > 0n);

    const chain = new ChainClient({
      rpcUrl: sandbox.rpcUrl,
      networkPassphrase: STANDALONE_PASSPHRASE,
      baseFee: 100,
      txTimeoutSeconds: 60,
      confirmTimeoutMs: 30_000,
    });
    await chain.restoreFootprint(source, sim.restorePreamble);
    t.true((await liveUntil(key)) >= (await server.getLatestLedger()).sequence, 'live again');
    const extend = Operation.extendFootprintTtl({ extendTo: 1000 });
    const after = await simulateAndSend(source, await cliTransaction(source, extend, { readOnly: [key] }));
    t.is(after.final?.status, rpc.Api.GetTransactionStatus.SUCCESS);
  },
);
