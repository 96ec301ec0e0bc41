// The Soroban host addon (soroban-host/, src/sandbox/soroban-host.ts) on the real host, end to end: testnet's
// settings, the Stellar Asset Contract (create, mint, transfers between accounts and to a contract, CAP-67
// events, refusals), authorization recorded by simulation, signed with the SDK's authorizeEntry and enforced
// on apply, a Wasm contract uploaded and created with constructor arguments, stellar-core's failure codes and
// fees. Every XDR the host returns is decoded with @stellar/stellar-sdk's `xdr`, which shows what the JS SDK
// can read. The test contract (contracts/test-counter) is compiled here, in the contracts' Cargo workspace.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  Account,
  Address,
  Asset,
  authorizeEntry,
  hash,
  Keypair,
  nativeToScVal,
  Networks,
  Operation,
  scValToNative,
  StrKey,
  TransactionBuilder,
  xdr,
} from '#stellar-sdk';
import test from 'ava';
import {
  type ApplyResult,
  type FootprintEntry,
  type LedgerChange,
  type LedgerContext,
  panicOnHostThreadForTest,
  type SimulateResult,
  type SimulateSuccess,
  type SnapshotEntry,
  SorobanHost,
} from '../../src/sandbox/soroban-host.ts';
import { cargoBuildWasm } from '../../scripts/build-contracts.ts';
import { readContractWasms } from '../../src/deploy/contract-wasm.ts';

const PASSPHRASE = Networks.TESTNET;

// ---------------------------------------------------------------------------------------------------------
// The test contract (contracts/test-counter), built in the contracts' workspace beside the pool's contracts

function buildTestContract(): Buffer {
  const release = cargoBuildWasm(['soroban-host-test-counter']);
  return readFileSync(join(release, 'soroban_host_test_counter.wasm'));
}

// ---------------------------------------------------------------------------------------------------------
// A minimal ledger: entries by key with their TTL, the changes applyInvoke returns committed into it

const bytes = (v: { toXdr(): Uint8Array }): Buffer => Buffer.from(v.toXdr());
const keyId = (key: Buffer | xdr.LedgerKey) => (Buffer.isBuffer(key) ? key : bytes(key)).toString('base64');

class Ledger {
  sequence = 1_000;
  timestamp = 1_800_000_000n;
  readonly entries = new Map<string, SnapshotEntry>();

  get context(): LedgerContext {
    return { sequence: this.sequence, timestamp: this.timestamp };
  }

  next(ledgers = 1): void {
    this.sequence += ledgers;
    this.timestamp += 5n * BigInt(ledgers);
  }

  put(key: xdr.LedgerKey, entry: xdr.LedgerEntry, liveUntil: number | null = null): void {
    this.entries.set(keyId(key), { entry: bytes(entry), liveUntil });
  }

  readonly get = (key: Buffer): SnapshotEntry | null => this.entries.get(keyId(key)) ?? null;

  footprint(data: xdr.SorobanTransactionData): FootprintEntry[] {
    const fp = data.resources.footprint;
    return [...fp.readOnly, ...fp.readWrite].map((key) => {
      const found = this.get(bytes(key));
      return { key: bytes(key), entry: found?.entry ?? null, liveUntil: found?.liveUntil ?? null };
    });
  }

  commit(changes: LedgerChange[]): void {
    for (const c of changes) {
      if (c.entry === null) this.entries.delete(keyId(c.key));
      else this.entries.set(keyId(c.key), { entry: c.entry, liveUntil: c.liveUntil });
    }
  }
}

function accountKey(kp: Keypair): xdr.LedgerKey {
  return xdr.LedgerKey.account(new xdr.LedgerKeyAccount({ accountId: kp.xdrAccountId() }));
}

function accountEntry(kp: Keypair, balance = 1_000_0000000n): xdr.LedgerEntry {
  return new xdr.LedgerEntry({
    lastModifiedLedgerSeq: 1,
    data: xdr.LedgerEntryData.account(
      new xdr.AccountEntry({
        accountId: kp.xdrAccountId(),
        balance,
        seqNum: 4294967296n,
        numSubEntries: 1,
        inflationDest: null,
        flags: 0,
        homeDomain: '',
        thresholds: new Uint8Array([1, 0, 0, 0]),
        signers: [],
        ext: xdr.AccountEntryExt.v0(),
      } as unknown as ConstructorParameters<typeof xdr.AccountEntry>[0]),
    ),
    ext: xdr.LedgerEntryExt.v0(),
  });
}

function trustlineKey(kp: Keypair, asset: Asset): xdr.LedgerKey {
  return xdr.LedgerKey.trustline(
    new xdr.LedgerKeyTrustLine({ accountId: kp.xdrAccountId(), asset: asset.toTrustLineXdrObject() }),
  );
}

function trustlineEntry(kp: Keypair, asset: Asset): xdr.LedgerEntry {
  return new xdr.LedgerEntry({
    lastModifiedLedgerSeq: 1,
    data: xdr.LedgerEntryData.trustline(
      new xdr.TrustLineEntry({
        accountId: kp.xdrAccountId(),
        asset: asset.toTrustLineXdrObject(),
        balance: 0n,
        limit: 9223372036854775807n,
        flags: xdr.TrustLineFlags.authorizedFlag.value,
        ext: xdr.TrustLineEntryExt.v0(),
      }),
    ),
    ext: xdr.LedgerEntryExt.v0(),
  });
}

function trustlineBalance(ledger: Ledger, kp: Keypair, asset: Asset): bigint {
  const found = ledger.get(bytes(trustlineKey(kp, asset)));
  if (!found) throw new Error(`no trustline for ${kp.publicKey()}`);
  const data = xdr.LedgerEntry.fromXdr(found.entry).data;
  if (data.type !== 'trustline') throw new Error('not a trustline');
  return data.trustLine.balance;
}

function contractData(entry: Buffer): xdr.ContractDataEntry {
  const data = xdr.LedgerEntry.fromXdr(entry).data;
  if (data.type !== 'contractData') throw new Error(`a ${data.type} entry, not contract data`);
  return data.contractData;
}

/** The SAC's balance of a contract address (a persistent ContractData entry), or null. */
function contractBalance(ledger: Ledger, sac: string, holder: string): bigint | null {
  const key = xdr.LedgerKey.contractData(
    new xdr.LedgerKeyContractData({
      contract: new Address(sac).toScAddress(),
      key: xdr.ScVal.scvVec([xdr.ScVal.scvSymbol('Balance'), new Address(holder).toScVal()]),
      durability: xdr.ContractDataDurability.persistent,
    }),
  );
  const found = ledger.get(bytes(key));
  if (!found) return null;
  return (scValToNative(contractData(found.entry).val) as { amount: bigint }).amount;
}

const keyType = (key: Buffer) => xdr.LedgerKey.fromXdr(key).type;

// ---------------------------------------------------------------------------------------------------------
// Driving the host as the sandbox will: simulate, sign the recorded auth, apply, commit

const host = new SorobanHost({
  networkPassphrase: PASSPHRASE,
  protocolVersion: 29,
  baseReserve: 5_000_000,
  configSettings: SorobanHost.testnetConfigSettings(),
});

const accountId = (kp: Keypair) => bytes(kp.xdrAccountId());

function hostOp(op: xdr.Operation): xdr.InvokeHostFunctionOp {
  if (op.body.type !== 'invokeHostFunction') throw new Error(`a ${op.body.type} operation`);
  return op.body.invokeHostFunctionOp;
}

interface Submitted {
  sim: SimulateSuccess;
  result: ApplyResult;
  data: xdr.SorobanTransactionData;
  txSize: number;
  op: xdr.InvokeHostFunctionOp;
}

function simulate(
  ledger: Ledger,
  source: Keypair,
  op: xdr.Operation,
  opts: { authMode?: 'record' | 'enforce'; useUpgradedAuth?: boolean } = {},
) {
  return host.simulateInvoke({
    operation: bytes(hostOp(op)),
    sourceAccount: accountId(source),
    authMode: opts.authMode ?? 'record',
    useUpgradedAuth: opts.useUpgradedAuth,
    ledger: ledger.context,
    getEntry: ledger.get,
  });
}

function expectOk(sim: SimulateResult): SimulateSuccess {
  if (!sim.ok) throw new Error(`simulation failed: ${sim.error}`);
  return sim;
}

/** Signs every address-credentialed entry with the signer whose account it names (or `signWith`). */
async function signAuth(
  ledger: Ledger,
  auth: Buffer[],
  signers: Keypair[],
  signWith?: Keypair,
): Promise<xdr.SorobanAuthorizationEntry[]> {
  const out: xdr.SorobanAuthorizationEntry[] = [];
  for (const raw of auth) {
    const entry = xdr.SorobanAuthorizationEntry.fromXdr(raw);
    const creds = entry.credentials;
    const address =
      creds.type === 'sorobanCredentialsAddress'
        ? creds.address.address
        : creds.type === 'sorobanCredentialsAddressV2'
          ? creds.addressV2.address
          : null;
    if (address === null) {
      out.push(entry);
      continue;
    }
    const who = Address.fromScAddress(address).toString();
    const signer = signWith ?? signers.find((s) => s.publicKey() === who);
    if (!signer) throw new Error(`no signer for ${who}`);
    out.push(await authorizeEntry(entry, signer, ledger.sequence + 100, PASSPHRASE));
  }
  return out;
}

/** The envelope's size, as the transaction would be submitted (signed by its source). */
function envelopeSize(
  source: Keypair,
  op: xdr.InvokeHostFunctionOp,
  data: xdr.SorobanTransactionData,
): number {
  const tx = new TransactionBuilder(new Account(source.publicKey(), '4294967296'), {
    fee: '100',
    networkPassphrase: PASSPHRASE,
  })
    .addOperation(Operation.invokeHostFunction({ func: op.hostFunction, auth: op.auth }))
    .setSorobanData(data)
    .setTimeout(0)
    .build();
  tx.sign(source);
  return tx.toEnvelope().toXdr().length;
}

/** SorobanTransactionData with some of its fields replaced. */
function withData(
  data: xdr.SorobanTransactionData,
  change: {
    instructions?: number;
    diskReadBytes?: number;
    writeBytes?: number;
    resourceFee?: bigint;
    readOnly?: xdr.LedgerKey[];
    readWrite?: xdr.LedgerKey[];
  },
): xdr.SorobanTransactionData {
  const r = data.resources;
  return new xdr.SorobanTransactionData({
    ext: data.ext,
    resourceFee: change.resourceFee ?? data.resourceFee,
    resources: new xdr.SorobanResources({
      footprint: new xdr.LedgerFootprint({
        readOnly: change.readOnly ?? r.footprint.readOnly,
        readWrite: change.readWrite ?? r.footprint.readWrite,
      }),
      instructions: change.instructions ?? r.instructions,
      diskReadBytes: change.diskReadBytes ?? r.diskReadBytes,
      writeBytes: change.writeBytes ?? r.writeBytes,
    }),
  });
}

async function submit(
  ledger: Ledger,
  source: Keypair,
  operation: xdr.Operation,
  opts: {
    signers?: Keypair[];
    signWith?: Keypair;
    useUpgradedAuth?: boolean;
    change?: (data: xdr.SorobanTransactionData) => xdr.SorobanTransactionData;
    commit?: boolean;
  } = {},
): Promise<Submitted> {
  const sim = expectOk(simulate(ledger, source, operation, { useUpgradedAuth: opts.useUpgradedAuth }));
  assertDecodes(sim);
  const auth = await signAuth(ledger, sim.auth, opts.signers ?? [], opts.signWith);
  const op = new xdr.InvokeHostFunctionOp({ hostFunction: hostOp(operation).hostFunction, auth });
  let data = xdr.SorobanTransactionData.fromXdr(sim.transactionData);
  if (opts.change) data = opts.change(data);
  const txSize = envelopeSize(source, op, data);
  const result = host.applyInvoke({
    operation: bytes(op),
    sorobanData: bytes(data),
    sourceAccount: accountId(source),
    transactionSizeBytes: txSize,
    ledger: ledger.context,
    entries: ledger.footprint(data),
    prngSeed: randomBytes(32),
  });
  assertDecodes(result);
  if (result.outcome === 'success' && opts.commit !== false) ledger.commit(result.changes);
  return { sim, result, data, txSize, op };
}

/** Decodes everything the host returned with the JS SDK's XDR (throws on the first failure). */
function assertDecodes(r: ApplyResult | SimulateResult): void {
  if ('outcome' in r) {
    if (r.returnValue) xdr.ScVal.fromXdr(r.returnValue);
    for (const c of r.changes) {
      xdr.LedgerKey.fromXdr(c.key);
      if (c.entry) xdr.LedgerEntry.fromXdr(c.entry);
    }
    for (const e of r.contractEvents) xdr.ContractEvent.fromXdr(e);
  } else if (r.ok) {
    xdr.ScVal.fromXdr(r.returnValue);
    xdr.SorobanTransactionData.fromXdr(r.transactionData);
    for (const a of r.auth) xdr.SorobanAuthorizationEntry.fromXdr(a);
    for (const c of r.stateChanges) {
      xdr.LedgerKey.fromXdr(c.key);
      if (c.before) xdr.LedgerEntry.fromXdr(c.before);
      if (c.after) xdr.LedgerEntry.fromXdr(c.after);
    }
    for (const e of r.contractEvents) xdr.ContractEvent.fromXdr(e);
  }
  for (const e of r.diagnosticEvents) xdr.DiagnosticEvent.fromXdr(e);
}

function events(r: ApplyResult): { topics: unknown[]; data: unknown }[] {
  return r.contractEvents.map((raw) => {
    const body = xdr.ContractEvent.fromXdr(raw).body.v0;
    return { topics: body.topics.map((t) => scValToNative(t)), data: scValToNative(body.data) };
  });
}

/** stellar-core's diagnostic error events: the message and arguments of each `error` event. */
function coreErrors(r: ApplyResult): string[] {
  return r.diagnosticEvents
    .map((raw) => xdr.DiagnosticEvent.fromXdr(raw).event.body.v0)
    .filter((b) => {
      const first = b.topics[0];
      return first?.type === 'scvSymbol' && first.sym.toString() === 'error';
    })
    .map((b) => {
      const d = scValToNative(b.data) as unknown;
      return Array.isArray(d) ? d.map(String).join(' ') : String(d);
    });
}

const returned = (r: ApplyResult): unknown =>
  scValToNative(xdr.ScVal.fromXdr(r.returnValue ?? bytes(xdr.ScVal.scvVoid())));
const invoke = (contract: string, fn: string, args: xdr.ScVal[]) =>
  Operation.invokeContractFunction({ contract, function: fn, args });
const i128 = (v: bigint) => nativeToScVal(v, { type: 'i128' });
const u32 = (v: number) => nativeToScVal(v, { type: 'u32' });
const addr = (a: Keypair | string) => new Address(typeof a === 'string' ? a : a.publicKey()).toScVal();
/** stellar-rpc's refundable-fee adjustment: max(v, floor(v × 1.15)), 0 stays 0. */
const stellarAdjust = (v: bigint) => (v === 0n ? 0n : v > (v * 115n) / 100n ? v : (v * 115n) / 100n);

// ---------------------------------------------------------------------------------------------------------
// The scenario: one ledger shared by the serial tests below

const ledger = new Ledger();
const issuer = Keypair.random();
const alice = Keypair.random();
const bob = Keypair.random();
const carol = Keypair.random(); // no trustline
const mallory = Keypair.random();
const relayer = Keypair.random(); // submits transactions that others authorize
const usdc = new Asset('USDC', issuer.publicKey());
const sac = usdc.contractId(PASSPHRASE);
const usdcName = `USDC:${issuer.publicKey()}`;
let wasm: Buffer;
let counter = '';

test.before(() => {
  for (const kp of [issuer, alice, bob, carol, mallory, relayer])
    ledger.put(accountKey(kp), accountEntry(kp));
  for (const kp of [alice, bob]) ledger.put(trustlineKey(kp, usdc), trustlineEntry(kp, usdc));
  wasm = buildTestContract();
});

test.serial('config settings decode with the JS SDK and equal the published testnet numbers', (t) => {
  const file = SorobanHost.testnetConfig();
  t.deepEqual(file.unknown, [], 'stellar-xdr 28 reads every published setting');
  t.deepEqual(file.synthesised, ['live_soroban_state_size_window', 'eviction_iterator']);
  const settings = new Map<string, xdr.ConfigSettingEntry>();
  const unreadable: string[] = [];
  for (const raw of file.settings) {
    try {
      const data = xdr.LedgerEntry.fromXdr(raw).data;
      if (data.type !== 'configSetting') throw new Error(`a ${data.type} entry`);
      settings.set(data.configSetting.type, data.configSetting);
    } catch (e) {
      // the setting id follows lastModifiedLedgerSeq (4 bytes) and the entry type (4 bytes)
      unreadable.push(`id ${raw.readUInt32BE(8)}: ${(e as Error).message}`);
    }
  }
  t.deepEqual(unreadable, [], 'the JS SDK reads every setting');
  t.is(settings.size, 19);
  const get = <K extends xdr.ConfigSettingEntry['type']>(type: K) => {
    const s = settings.get(type);
    if (s?.type !== type) throw new Error(`no ${type}`);
    return s as Extract<xdr.ConfigSettingEntry, { type: K }>;
  };
  t.is(get('configSettingContractMaxSizeBytes').contractMaxSizeBytes, 131_072);
  const compute = get('configSettingContractComputeV0').contractCompute;
  t.is(compute.txMaxInstructions, 400_000_000n);
  t.is(compute.ledgerMaxInstructions, 580_000_000n);
  t.is(compute.feeRatePerInstructionsIncrement, 7n);
  t.is(compute.txMemoryLimit, 41_943_040);
  const cost = get('configSettingContractLedgerCostV0').contractLedgerCost;
  t.is(cost.feeDiskReadLedgerEntry, 1_563n);
  t.is(cost.feeWriteLedgerEntry, 2_500n);
  t.is(cost.feeDiskRead1Kb, 447n);
  t.is(cost.txMaxDiskReadBytes, 200_000);
  t.is(cost.txMaxWriteBytes, 132_096);
  t.is(cost.sorobanStateTargetSizeBytes, 4_000_000_000n);
  t.is(cost.rentFee1KbSorobanStateSizeLow, -17_000n);
  t.is(cost.rentFee1KbSorobanStateSizeHigh, 10_000n);
  t.is(get('configSettingContractLedgerCostExtV0').contractLedgerCostExt.feeWrite1Kb, 875n);
  t.is(get('configSettingContractHistoricalDataV0').contractHistoricalData.feeHistorical1Kb, 4_059n);
  const ev = get('configSettingContractEventsV0').contractEvents;
  t.is(ev.feeContractEvents1Kb, 5_000n);
  t.is(ev.txMaxContractEventsSizeBytes, 16_384);
  t.is(get('configSettingContractBandwidthV0').contractBandwidth.feeTxSize1Kb, 406n);
  const archival = get('configSettingStateArchival').stateArchivalSettings;
  t.is(archival.minPersistentTtl, 120_960);
  t.is(archival.minTemporaryTtl, 720);
  t.is(archival.maxEntryTtl, 3_110_400);
  t.is(archival.persistentRentRateDenominator, 1_215n);
  const cpu = get('configSettingContractCostParamsCpuInstructions').contractCostParamsCpuInsns;
  t.is(cpu.length, 86);
  t.is(cpu[0]?.constTerm, 4n);
  t.is(cpu[85]?.linearTerm, 41_568_084n);
  t.is(get('configSettingContractCostParamsMemoryBytes').contractCostParamsMemBytes.length, 86);
  t.deepEqual(
    get('configSettingLiveSorobanStateSizeWindow').liveSorobanStateSizeWindow,
    Array<bigint>(30).fill(4_000_000_000n),
  );
  t.is(get('configSettingEvictionIterator').evictionIterator.bucketListLevel, 7);
  t.deepEqual(get('configSettingFrozenLedgerKeys').frozenLedgerKeys.keys, []);
  const info = host.info();
  t.is(info.rentFeePer1Kb, 10_000n, 'rent priced at the target state size: the high rate');
  t.is(info.limits.txMaxInstructions, 400_000_000);
  t.is(info.networkId.toString('hex'), Buffer.from(hash(PASSPHRASE)).toString('hex'));
});

test.serial("the Stellar Asset Contract is the host's own: create, mint, events", async (t) => {
  const created = await submit(ledger, relayer, Operation.createStellarAssetContract({ asset: usdc }));
  t.is(created.result.outcome, 'success', created.result.error ?? '');
  t.is(returned(created.result), sac);
  const instance = created.result.changes.find((c) => c.kind === 'created');
  if (!instance?.entry) throw new Error('no instance created');
  const value = contractData(instance.entry).val;
  if (value.type !== 'scvContractInstance') throw new Error('not an instance');
  t.is(value.instance.executable.type, 'contractExecutableStellarAsset');
  t.is(instance.liveUntil, ledger.sequence + 120_960 - 1, 'a new persistent entry lives min_persistent_ttl');
  t.true(created.result.fee.rent > 0n, 'rent for the new instance');
  ledger.next();

  // mint: the issuer is the admin, authorizing as the transaction's source (no signature needed)
  const minted = await submit(ledger, issuer, invoke(sac, 'mint', [addr(alice), i128(1_000_0000000n)]));
  t.is(minted.result.outcome, 'success', minted.result.error ?? '');
  t.deepEqual(events(minted.result), [
    { topics: ['mint', alice.publicKey(), usdcName], data: 1_000_0000000n },
  ]);
  t.is(trustlineBalance(ledger, alice, usdc), 1_000_0000000n);
  t.deepEqual(
    minted.result.changes.map((c) => [c.kind, keyType(c.key)]),
    [['updated', 'trustline']],
    'only the trustline changed',
  );
  ledger.next();
});

test.serial(
  'transfer between accounts: recorded auth signed with authorizeEntry, enforced on apply',
  async (t) => {
    const transfer = invoke(sac, 'transfer', [addr(alice), addr(bob), i128(250_0000000n)]);
    // a relayer submits: alice's authorization is an address credential that must be signed
    const first = expectOk(simulate(ledger, relayer, transfer));
    const second = expectOk(simulate(ledger, relayer, transfer));
    t.is(first.auth.length, 1);
    const nonce = (raw: Buffer | undefined) => {
      const creds = xdr.SorobanAuthorizationEntry.fromXdr(raw ?? Buffer.alloc(0)).credentials;
      if (creds.type !== 'sorobanCredentialsAddress') throw new Error(creds.type);
      return creds.address.nonce;
    };
    t.not(nonce(first.auth[0]), nonce(second.auth[0]), 'each simulation records a fresh nonce');

    // a signature by someone else is refused by the host
    const forged = await submit(ledger, relayer, transfer, { signWith: mallory });
    t.is(forged.result.outcome, 'trapped');
    t.regex(forged.result.error ?? '', /Auth/);
    t.deepEqual(forged.result.changes, []);
    t.deepEqual(forged.result.contractEvents, []);
    t.is(forged.result.fee.refundableConsumed, 0n, 'a failed operation consumes no refundable fee');
    t.is(trustlineBalance(ledger, alice, usdc), 1_000_0000000n);

    const sent = await submit(ledger, relayer, transfer, { signers: [alice] });
    t.is(sent.result.outcome, 'success', sent.result.error ?? '');
    t.deepEqual(events(sent.result), [
      { topics: ['transfer', alice.publicKey(), bob.publicKey(), usdcName], data: 250_0000000n },
    ]);
    t.is(trustlineBalance(ledger, alice, usdc), 750_0000000n);
    t.is(trustlineBalance(ledger, bob, usdc), 250_0000000n);
    t.true(
      sent.result.changes.some((c) => c.kind === 'created' && keyType(c.key) === 'contractData'),
      'the spent nonce is a new temporary entry',
    );
    t.true(sent.result.diskReadBytes > 0, 'trustlines are classic entries: disk reads');
    t.true(sent.result.cpuInstructions <= BigInt(sent.data.resources.instructions));

    // replaying the same signed entries is refused: the nonce is spent
    const replay = host.applyInvoke({
      operation: bytes(sent.op),
      sorobanData: bytes(sent.data),
      sourceAccount: accountId(relayer),
      transactionSizeBytes: sent.txSize,
      ledger: ledger.context,
      entries: ledger.footprint(sent.data),
      prngSeed: randomBytes(32),
    });
    t.is(replay.outcome, 'trapped');
    ledger.next();

    // AddressV2 credentials (stellar-rpc's useUpgradedAuth), signed and enforced the same way
    const upgraded = await submit(
      ledger,
      relayer,
      invoke(sac, 'transfer', [addr(alice), addr(bob), i128(1n)]),
      {
        signers: [alice],
        useUpgradedAuth: true,
      },
    );
    t.is(
      xdr.SorobanAuthorizationEntry.fromXdr(upgraded.sim.auth[0] ?? Buffer.alloc(0)).credentials.type,
      'sorobanCredentialsAddressV2',
    );
    t.is(upgraded.result.outcome, 'success', upgraded.result.error ?? '');
    ledger.next();
  },
);

test.serial('transfers to a contract balance, and refusals without a trustline', async (t) => {
  // alice pays a contract address: its balance is a ContractData entry of the SAC
  const holder = StrKey.encodeContract(Buffer.from(hash('some contract')));
  const toContract = await submit(
    ledger,
    alice,
    invoke(sac, 'transfer', [addr(alice), addr(holder), i128(50_0000000n)]),
  );
  t.is(toContract.result.outcome, 'success', toContract.result.error ?? '');
  t.is(contractBalance(ledger, sac, holder), 50_0000000n);
  t.deepEqual(events(toContract.result)[0]?.topics, ['transfer', alice.publicKey(), holder, usdcName]);
  t.truthy(
    toContract.sim.stateChanges.find((c) => c.before === null && keyType(c.key) === 'contractData'),
    'simulation reports the new balance entry',
  );
  ledger.next();

  // carol has no trustline: simulation fails, and so does applying
  const toCarol = invoke(sac, 'transfer', [addr(alice), addr(carol), i128(1n)]);
  const sim = simulate(ledger, alice, toCarol);
  t.false(sim.ok);
  if (!sim.ok) t.regex(sim.error, /trustline/i);
  const data = withData(toContract.data, {
    readWrite: toContract.data.resources.footprint.readWrite.map((k) =>
      k.type === 'contractData' ? trustlineKey(carol, usdc) : k,
    ),
  });
  // alice submits herself, so her authorization is the source account's
  const hostFunction = hostOp(toCarol).hostFunction;
  if (hostFunction.type !== 'hostFunctionTypeInvokeContract') throw new Error(hostFunction.type);
  const sourceAuth = new xdr.SorobanAuthorizationEntry({
    credentials: xdr.SorobanCredentials.sorobanCredentialsSourceAccount(),
    rootInvocation: new xdr.SorobanAuthorizedInvocation({
      function: xdr.SorobanAuthorizedFunction.sorobanAuthorizedFunctionTypeContractFn(
        hostFunction.invokeContract,
      ),
      subInvocations: [],
    }),
  });
  const refused = host.applyInvoke({
    operation: bytes(new xdr.InvokeHostFunctionOp({ hostFunction, auth: [sourceAuth] })),
    sorobanData: bytes(data),
    sourceAccount: accountId(alice),
    transactionSizeBytes: toContract.txSize,
    ledger: ledger.context,
    entries: ledger.footprint(data),
    prngSeed: randomBytes(32),
  });
  t.is(refused.outcome, 'trapped');
  t.regex(refused.error ?? '', /trustline/i);
  t.deepEqual(refused.changes, []);
  assertDecodes(refused);
  ledger.next();
});

test.serial(
  'a Wasm contract: upload, CreateContractV2 with constructor arguments, invocations',
  async (t) => {
    const uploaded = await submit(ledger, alice, Operation.uploadContractWasm({ wasm }));
    t.is(uploaded.result.outcome, 'success', uploaded.result.error ?? '');
    const wasmHash = Buffer.from(hash(wasm));
    t.deepEqual(Buffer.from(returned(uploaded.result) as Uint8Array), wasmHash);
    t.false(host.hasCachedModule(wasmHash), 'stellar-core caches new code when the ledger closes');
    ledger.next();

    const create = Operation.createCustomContract({
      address: new Address(alice.publicKey()),
      wasmHash,
      salt: randomBytes(32),
      constructorArgs: [addr(alice), u32(5)],
    });
    const created = await submit(ledger, alice, create);
    t.is(created.result.outcome, 'success', created.result.error ?? '');
    counter = returned(created.result) as string;
    t.true(host.hasCachedModule(wasmHash), 'code from an earlier ledger is cached when used');
    ledger.next();

    const admin = await submit(ledger, bob, invoke(counter, 'admin', []));
    t.is(returned(admin.result), alice.publicKey());

    // increment needs alice (the admin); bob submits, alice signs
    const incremented = await submit(ledger, bob, invoke(counter, 'increment', [u32(3)]), {
      signers: [alice],
    });
    t.is(incremented.result.outcome, 'success', incremented.result.error ?? '');
    t.is(returned(incremented.result), 8);
    t.deepEqual(events(incremented.result), [{ topics: ['counted'], data: { count: 8 } }]);
    ledger.next();

    // a nested, authorized SAC transfer into the contract's balance
    const deposit = await submit(
      ledger,
      bob,
      invoke(counter, 'deposit', [addr(sac), addr(alice), i128(10_0000000n)]),
      {
        signers: [alice],
      },
    );
    t.is(deposit.result.outcome, 'success', deposit.result.error ?? '');
    t.is(contractBalance(ledger, sac, counter), 10_0000000n);
    const invocation = xdr.SorobanAuthorizationEntry.fromXdr(
      deposit.sim.auth[0] ?? Buffer.alloc(0),
    ).rootInvocation;
    t.is(invocation.subInvocations.length, 1, 'the recorded tree holds the nested transfer');
    ledger.next();
  },
);

test.serial('the module cache: code uploaded in a ledger is parsed from the next ledger on', async (t) => {
  // the same contract with a custom section appended: other bytes, other hash, new code
  const other = Buffer.concat([wasm, Buffer.from([0, 5, 4]), Buffer.from('test')]);
  const otherHash = Buffer.from(hash(other));
  t.is(
    (await submit(ledger, alice, Operation.uploadContractWasm({ wasm: other }))).result.outcome,
    'success',
  );
  // Still in the ledger that uploaded it, stellar-core has not cached the code and parses it on every use.
  // Simulation cannot see this case (it reads closed ledgers, and assumes code it finds is cached), so
  // these transactions declare more instructions than simulated.
  const generous = (d: xdr.SorobanTransactionData) =>
    withData(d, { instructions: d.resources.instructions + 5_000_000, resourceFee: 10_000_000n });
  const created = await submit(
    ledger,
    alice,
    Operation.createCustomContract({
      address: new Address(alice.publicKey()),
      wasmHash: otherHash,
      salt: randomBytes(32),
      constructorArgs: [addr(bob), u32(0)],
    }),
    { change: generous },
  );
  t.is(created.result.outcome, 'success', created.result.error ?? '');
  const contract = returned(created.result) as string;
  const sameLedger = await submit(ledger, alice, invoke(contract, 'admin', []), { change: generous });
  t.is(sameLedger.result.outcome, 'success', sameLedger.result.error ?? '');
  t.true(
    sameLedger.result.cpuInstructions > sameLedger.sim.cpuInstructions,
    'parsing costs more than simulated',
  );
  t.false(host.hasCachedModule(otherHash), 'not cached in the ledger that uploaded it');
  ledger.next();
  const nextLedger = await submit(ledger, alice, invoke(contract, 'admin', []));
  t.is(nextLedger.result.outcome, 'success', nextLedger.result.error ?? '');
  t.true(host.hasCachedModule(otherHash));
  t.is(returned(nextLedger.result), bob.publicKey());
  t.true(
    nextLedger.result.cpuInstructions < sameLedger.result.cpuInstructions,
    'a cached module is not parsed again',
  );
  t.log(
    `admin(): ${sameLedger.result.cpuInstructions} instructions parsing the module, ${nextLedger.result.cpuInstructions} from the cache (simulated: ${nextLedger.sim.cpuInstructions})`,
  );
  ledger.next();
});

test.serial(
  'fees: simulation minResourceFee = transactionResourceFee + adjusted (rent + events)',
  async (t) => {
    // a transfer to a new contract balance: rent (a new entry) and events both count
    const holder = StrKey.encodeContract(Buffer.from(hash('fee probe')));
    const r = await submit(ledger, alice, invoke(sac, 'transfer', [addr(alice), addr(holder), i128(7n)]), {
      commit: false,
    });
    t.is(r.result.outcome, 'success');
    t.true(r.result.fee.rent > 0n);
    const fee = host.transactionResourceFee({
      sorobanData: r.sim.transactionData,
      transactionSizeBytes: r.sim.transactionSizeBytes,
      eventsSizeBytes: r.sim.eventsSizeBytes,
    });
    t.is(r.result.eventsSizeBytes, r.sim.eventsSizeBytes);
    t.is(r.result.fee.events, fee.refundable, 'the same events, the same events fee');
    t.is(r.sim.minResourceFee, fee.nonRefundable + stellarAdjust(fee.refundable + r.result.fee.rent));
    // what apply charges: the non-refundable fee of the real envelope, plus rent and events
    const declared = host.transactionResourceFee({
      sorobanData: bytes(r.data),
      transactionSizeBytes: r.txSize,
    });
    t.is(r.result.fee.nonRefundable, declared.nonRefundable);
    t.is(r.result.fee.refundableConsumed, r.result.fee.rent + r.result.fee.events);
    t.is(r.result.fee.refundableDeclared, r.sim.minResourceFee - declared.nonRefundable);
    t.log(
      `transfer to a new contract balance: minResourceFee ${r.sim.minResourceFee}; charged ${declared.nonRefundable} + rent ${r.result.fee.rent} + events ${r.result.fee.events}`,
    );
  },
);

test.serial(
  'stellar-core outcomes: budget, footprint, disk reads, writes, events, refundable fee',
  async (t) => {
    const exhausted = await submit(ledger, alice, invoke(counter, 'burn', [u32(2_000)]), {
      commit: false,
      change: (d) => withData(d, { instructions: 1_000_000 }),
    });
    t.is(exhausted.result.outcome, 'resourceLimitExceeded');
    t.true(exhausted.result.cpuInstructions > 1_000_000n);
    t.true(
      coreErrors(exhausted.result).some((e) =>
        e.startsWith('operation instructions exceeds amount specified'),
      ),
    );
    t.regex(exhausted.result.error ?? '', /Budget, ExceededLimit/);

    // the count is read-write in the simulated footprint: made read-only, the write is outside the footprint
    const readOnly = await submit(ledger, alice, invoke(counter, 'increment', [u32(1)]), {
      commit: false,
      change: (d) => {
        const fp = d.resources.footprint;
        return withData(d, {
          readOnly: [...fp.readOnly, ...fp.readWrite.filter((k) => k.type === 'contractData')],
          readWrite: fp.readWrite.filter((k) => k.type !== 'contractData'),
        });
      },
    });
    t.is(readOnly.result.outcome, 'trapped');
    t.regex(readOnly.result.error ?? '', /Storage, ExceededLimit/);
    t.deepEqual(readOnly.result.changes, []);

    const transfer = () => invoke(sac, 'transfer', [addr(alice), addr(bob), i128(1n)]);
    const reads = await submit(ledger, alice, transfer(), {
      commit: false,
      change: (d) => withData(d, { diskReadBytes: 10 }),
    });
    t.is(reads.result.outcome, 'resourceLimitExceeded');
    t.true(
      coreErrors(reads.result).some((e) =>
        e.startsWith('operation byte-read resources exceeds amount specified'),
      ),
    );

    const writes = await submit(ledger, alice, transfer(), {
      commit: false,
      change: (d) => withData(d, { writeBytes: 10 }),
    });
    t.is(writes.result.outcome, 'resourceLimitExceeded');
    t.true(
      coreErrors(writes.result).some((e) => e.startsWith('operation byte-write resources exceeds amount')),
    );

    // an event above tx_max_contract_events_size_bytes: simulation lets it through, stellar-core refuses it
    const shout = await submit(ledger, alice, invoke(counter, 'shout', [u32(17)]), { commit: false });
    t.is(shout.result.outcome, 'resourceLimitExceeded');
    t.true(
      coreErrors(shout.result).some((e) => e.startsWith('total events size exceeds network config maximum')),
    );

    const holder = StrKey.encodeContract(Buffer.from(hash('rent')));
    const stingy = await submit(
      ledger,
      alice,
      invoke(sac, 'transfer', [addr(alice), addr(holder), i128(1n)]),
      {
        commit: false,
        change: (d) => {
          const { nonRefundable } = host.transactionResourceFee({
            sorobanData: bytes(d),
            transactionSizeBytes: 2_000,
          });
          return withData(d, { resourceFee: nonRefundable + 1_000n });
        },
      },
    );
    t.is(stingy.result.outcome, 'insufficientRefundableFee');
    t.true(coreErrors(stingy.result).some((e) => e.startsWith('refundable resource fee was not sufficient')));
  },
);

test.serial('archived entries: refused, or restored when the transaction marks them', async (t) => {
  const increment = invoke(counter, 'increment', [u32(1)]);
  const live = expectOk(simulate(ledger, alice, increment));
  const liveData = xdr.SorobanTransactionData.fromXdr(live.transactionData);
  const countKey = liveData.resources.footprint.readWrite.find(
    (k) => k.type === 'contractData' && k.contractData.key.type === 'scvVec',
  );
  if (!countKey) throw new Error('no count key');
  const stored = ledger.get(bytes(countKey));
  if (!stored) throw new Error('no count entry');
  // the count entry's TTL lapses
  ledger.entries.set(keyId(countKey), { entry: stored.entry, liveUntil: ledger.sequence - 1 });

  const archived = host.applyInvoke({
    operation: bytes(hostOp(increment)),
    sorobanData: live.transactionData,
    sourceAccount: accountId(alice),
    transactionSizeBytes: 1_000,
    ledger: ledger.context,
    entries: ledger.footprint(liveData),
    prngSeed: randomBytes(32),
  });
  t.is(archived.outcome, 'entryArchived');
  t.true(coreErrors(archived).some((e) => e.startsWith('trying to access an archived contract data entry')));
  assertDecodes(archived);

  // simulation marks it for restoration; applying restores it
  const restoring = await submit(ledger, alice, increment, { signers: [alice] });
  const ext = restoring.data.ext;
  if (ext.type !== 'resourceExt') throw new Error('no archived entries marked');
  t.is(ext.resourceExt.archivedSorobanEntries.length, 1);
  t.is(restoring.result.outcome, 'success', restoring.result.error ?? '');
  const restored = restoring.result.changes.find((c) => c.kind === 'restored');
  t.is(restored?.liveUntil, ledger.sequence + 120_960 - 1);
  t.true(restoring.result.diskReadBytes > 0, 'a restored entry is read from disk');
  ledger.next();
});

test.serial('extend and restore preflight', (t) => {
  const instance = xdr.LedgerKey.contractData(
    new xdr.LedgerKeyContractData({
      contract: new Address(counter).toScAddress(),
      key: xdr.ScVal.scvLedgerKeyContractInstance(),
      durability: xdr.ContractDataDurability.persistent,
    }),
  );
  const extended = host.simulateExtendTtl({
    keys: [bytes(instance)],
    extendTo: 500_000,
    ledger: ledger.context,
    getEntry: ledger.get,
  });
  if (!extended.ok) throw new Error(extended.error);
  t.true(extended.minResourceFee > 0n);
  t.is(xdr.SorobanTransactionData.fromXdr(extended.transactionData).resources.footprint.readOnly.length, 1);
  t.is(extended.restorePreamble, null);
  const restore = host.simulateRestore({
    keys: [bytes(instance)],
    ledger: ledger.context,
    getEntry: ledger.get,
  });
  if (!restore.ok) throw new Error(restore.error);
  t.is(
    xdr.SorobanTransactionData.fromXdr(restore.transactionData).resources.footprint.readWrite.length,
    0,
    'a live entry needs no restoring',
  );
});

test.serial('malformed input is a thrown Error, never a crash', (t) => {
  const decimals = invoke(sac, 'decimals', []);
  const sim = expectOk(simulate(ledger, alice, decimals));
  const data = xdr.SorobanTransactionData.fromXdr(sim.transactionData);
  const base = {
    operation: bytes(hostOp(decimals)),
    sorobanData: sim.transactionData,
    sourceAccount: accountId(alice),
    transactionSizeBytes: 100,
    ledger: ledger.context,
    entries: ledger.footprint(data),
    prngSeed: randomBytes(32),
  };
  t.is(host.applyInvoke(base).outcome, 'success');
  t.throws(() => host.applyInvoke({ ...base, operation: Buffer.from([0, 0, 0, 9]) }), {
    message: /operation is not valid InvokeHostFunctionOp XDR/,
  });
  t.throws(() => host.applyInvoke({ ...base, sorobanData: Buffer.alloc(3) }), {
    message: /sorobanData is not valid SorobanTransactionData XDR/,
  });
  t.throws(() => host.applyInvoke({ ...base, entries: [] }), {
    message: /entries has 0 items but the footprint has/,
  });
  const transfer = invoke(sac, 'transfer', [addr(alice), addr(bob), i128(1n)]);
  const transferSim = expectOk(simulate(ledger, alice, transfer));
  const transferData = xdr.SorobanTransactionData.fromXdr(transferSim.transactionData);
  t.throws(
    () =>
      host.applyInvoke({
        ...base,
        operation: bytes(hostOp(transfer)),
        sorobanData: transferSim.transactionData,
        entries: ledger.footprint(transferData).reverse(),
      }),
    { message: /entries\[0\]\.key is not footprint key 0/ },
  );
  const swapped = ledger
    .footprint(transferData)
    .map((e, i, all) => ({ ...e, entry: all[all.length - 1 - i]?.entry ?? null }));
  t.throws(
    () =>
      host.applyInvoke({
        ...base,
        operation: bytes(hostOp(transfer)),
        sorobanData: transferSim.transactionData,
        entries: swapped,
      }),
    { message: /entries\[0\]\.entry is not the entry of entries\[0\]\.key/ },
  );
  t.throws(() => host.applyInvoke({ ...base, prngSeed: Buffer.alloc(3) }), {
    message: /prngSeed must be 32 bytes/,
  });
  t.throws(() => host.applyInvoke({ ...base, ledger: { sequence: ledger.sequence, timestamp: -1n } }), {
    message: /timestamp must be a non-negative bigint/,
  });
  t.throws(
    () =>
      host.simulateInvoke({
        operation: Buffer.from('garbage'),
        sourceAccount: accountId(alice),
        authMode: 'record',
        ledger: ledger.context,
        getEntry: ledger.get,
      }),
    { message: /operation is not valid InvokeHostFunctionOp XDR/ },
  );
  // a reader that throws makes the simulation fail with its message
  const failing = host.simulateInvoke({
    operation: bytes(hostOp(decimals)),
    sourceAccount: accountId(alice),
    authMode: 'record',
    ledger: ledger.context,
    getEntry: () => {
      throw new Error('disk on fire');
    },
  });
  t.false(failing.ok);
  if (!failing.ok) t.regex(failing.error, /disk on fire/);
  // a reader that answers garbage too
  const garbage = host.simulateInvoke({
    operation: bytes(hostOp(decimals)),
    sourceAccount: accountId(alice),
    authMode: 'record',
    ledger: ledger.context,
    getEntry: () => ({ entry: Buffer.from('nope'), liveUntil: 1 }),
  });
  t.false(garbage.ok);
  if (!garbage.ok) t.regex(garbage.error, /getEntry's entry is not valid LedgerEntry XDR/);
  t.throws(
    () =>
      new SorobanHost({ networkPassphrase: 'x', protocolVersion: 29, baseReserve: 1, configSettings: [] }),
    {
      message: /lack contract_max_size_bytes/,
    },
  );
  t.throws(
    () =>
      new SorobanHost({
        networkPassphrase: 'x',
        protocolVersion: 28,
        baseReserve: 1,
        configSettings: SorobanHost.testnetConfigSettings(),
      }),
    { message: /not the protocol of this host/ },
  );
  t.throws(() => SorobanHost.configFromUpgradeJson('{'), { message: /not JSON/ });
  t.throws(() => panicOnHostThreadForTest(), { message: /panicked: a deliberate panic on the host thread/ });
  // the host still works after all that
  t.true(simulate(ledger, alice, decimals).ok);
});

test.serial("the pool's contracts in build/contracts/ upload, and the ASP allowlist runs", async (t) => {
  const wasms = readContractWasms();
  for (const { name, wasm } of Object.values(wasms)) {
    const r = await submit(ledger, alice, Operation.uploadContractWasm({ wasm }));
    t.is(r.result.outcome, 'success', `${name}: ${r.result.error ?? ''}`);
  }
  ledger.next();
  // the allowlist: an incremental Merkle tree hashed with Poseidon2 through the host
  const created = await submit(
    ledger,
    alice,
    Operation.createCustomContract({
      address: new Address(alice.publicKey()),
      wasmHash: wasms.asp_membership.hash,
      salt: randomBytes(32),
      constructorArgs: [addr(alice), u32(10)],
    }),
  );
  t.is(created.result.outcome, 'success', created.result.error ?? '');
  const asp = returned(created.result) as string;
  ledger.next();
  const aspRoot = async () => returned((await submit(ledger, alice, invoke(asp, 'get_root', []))).result);
  const before = await aspRoot();
  const inserted = await submit(
    ledger,
    alice,
    invoke(asp, 'insert_leaf', [nativeToScVal(12345n, { type: 'u256' })]),
  );
  t.is(inserted.result.outcome, 'success', inserted.result.error ?? '');
  t.not(await aspRoot(), before, 'the root moved');
  t.log(
    `asp_membership.insert_leaf: ${inserted.result.cpuInstructions} instructions, fee ${inserted.sim.minResourceFee}`,
  );
  ledger.next();
});

test.serial('per-call wall time of a SAC transfer (apply and simulate)', (t) => {
  const transfer = invoke(sac, 'transfer', [addr(alice), addr(bob), i128(1n)]);
  const sim = expectOk(simulate(ledger, alice, transfer));
  const data = xdr.SorobanTransactionData.fromXdr(sim.transactionData);
  const op = new xdr.InvokeHostFunctionOp({
    hostFunction: hostOp(transfer).hostFunction,
    auth: sim.auth.map((a) => xdr.SorobanAuthorizationEntry.fromXdr(a)),
  });
  const request = {
    operation: bytes(op),
    sorobanData: sim.transactionData,
    sourceAccount: accountId(alice),
    transactionSizeBytes: envelopeSize(alice, op, data),
    ledger: ledger.context,
    entries: ledger.footprint(data),
    prngSeed: randomBytes(32),
  };
  const median = (f: () => void) => {
    const times: number[] = [];
    for (let i = 0; i < 61; i++) {
      const start = process.hrtime.bigint();
      f();
      times.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
    return times.sort((a, b) => a - b)[30] ?? 0;
  };
  let last: ApplyResult | undefined;
  const applyMs = median(() => {
    last = host.applyInvoke(request);
  });
  const simulateMs = median(() => simulate(ledger, alice, transfer));
  t.is(last?.outcome, 'success');
  t.log(
    `SAC transfer: applyInvoke ${applyMs.toFixed(2)} ms (host invocation ${(Number(last?.invokeNanos ?? 0n) / 1e6).toFixed(2)} ms), simulateInvoke ${simulateMs.toFixed(2)} ms (medians of 61)`,
  );
  t.true(applyMs < 50 && simulateMs < 50);
});
