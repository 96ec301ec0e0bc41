// Contract specs on the sandbox, through the SDK's own tools: each pool-network contract's code entry is the
// module `npm run build` compiled (byte for byte), exporting its functions, whose contractspecv0 section the
// SDK parses; `contract.Client.from` builds typed clients for pool, verifier and both ASP contracts (read
// calls and signed write calls), and calls that do not match the published interface are refused as the
// real host refuses them.
import { Account, contract, Keypair, rpc, xdr } from '#stellar-sdk';
import test from 'ava';
import type { PoolSandbox } from '../../src/deploy/sandbox-network.ts';
import { readContractWasms } from '../../src/deploy/contract-wasm.ts';
import { contractErrorOf } from '../../src/ledger/contract-errors.ts';
import {
  ASP_MEMBERSHIP_INTERFACE,
  ASP_NON_MEMBERSHIP_INTERFACE,
  POOL_INTERFACE,
  VERIFIER_INTERFACE,
} from '../../src/ledger/pool-interface.ts';
import { STANDALONE_PASSPHRASE } from '../../src/ledger/networks.ts';
import { invokeTx, startSandbox } from './helpers.ts';

let sandbox: PoolSandbox;
let server: rpc.Server;
let admin: Keypair;

test.before(async () => {
  ({ sandbox, server } = await startSandbox());
  admin = Keypair.fromSecret(sandbox.secrets().admin);
});
test.after.always(() => sandbox?.close());

const ROLES = [
  ['pool', POOL_INTERFACE],
  ['verifier', VERIFIER_INTERFACE],
  ['asp_membership', ASP_MEMBERSHIP_INTERFACE],
  ['asp_non_membership', ASP_NON_MEMBERSHIP_INTERFACE],
] as const;

function client(id: string, signer?: Keypair): Promise<contract.Client> {
  return contract.Client.from({
    contractId: id,
    rpcUrl: sandbox.rpcUrl,
    allowHttp: true,
    networkPassphrase: STANDALONE_PASSPHRASE,
    ...(signer && {
      publicKey: signer.publicKey(),
      ...contract.basicNodeSigner(signer, STANDALONE_PASSPHRASE),
    }),
  });
}

interface FindResult {
  found: boolean;
  siblings: bigint[];
}

type Methods = Record<
  string,
  (args?: Record<string, unknown>) => Promise<contract.AssembledTransaction<unknown>>
>;

test('getContractWasmByContractId returns the compiled module, whose spec the SDK parses, for every contract', async (t) => {
  const built = readContractWasms();
  for (const [role, iface] of ROLES) {
    const id = sandbox.info.contracts[role];
    const wasm = await server.getContractWasmByContractId(id);
    t.true(
      Buffer.from(wasm).equals(built[role].wasm),
      `${role}: the module npm run build compiled, byte for byte`,
    );
    // a real compiled module: it exports every function of the interface as code the VM runs
    const exported = WebAssembly.Module.exports(new WebAssembly.Module(Buffer.from(wasm)))
      .filter((e) => e.kind === 'function')
      .map((e) => e.name);
    for (const f of iface.functions) t.true(exported.includes(f.name), `${role} exports ${f.name}`);
    const spec = contract.Spec.fromWasm(wasm);
    const names = spec.funcs().map((f) => String(f.name));
    t.deepEqual(
      names.sort(),
      iface.functions.map((f) => f.name).sort(),
      `${role}: the published functions are the interface's`,
    );
    t.deepEqual(
      spec.errorCases().map((c) => [String(c.name), Number(c.value)]),
      Object.entries(iface.errors[0]?.cases ?? {}),
      `${role}: the published error enum`,
    );
  }
  // the pool's transact takes (proof: Proof, ext_data: ExtData, sender: Address)
  const spec = contract.Spec.fromWasm(await server.getContractWasmByContractId(sandbox.info.contracts.pool));
  const transact = spec.getFunc('transact');
  t.deepEqual(
    transact.inputs.map((i) => [String(i.name), i.type.type]),
    [
      ['proof', 'scSpecTypeUdt'],
      ['ext_data', 'scSpecTypeUdt'],
      ['sender', 'scSpecTypeAddress'],
    ],
  );
});

test('contract.Client.from: typed read calls on the pool, verifier and ASP contracts', async (t) => {
  const { contracts, accounts } = sandbox.info;
  const pool = (await client(contracts.pool)) as unknown as Methods;
  const root = (await pool.get_root!()).result as bigint;
  t.is(typeof root, 'bigint');
  t.is((await pool.get_policy_flags!()).result, 3);
  t.is((await pool.is_spent!({ nullifier: 12345n })).result, false);
  t.is((await pool.is_known_root!({ root, tree: 0 })).result, true);
  t.is((await pool.get_payout_wallet!()).result, accounts.poolWallet);

  const membership = (await client(contracts.asp_membership)) as unknown as Methods;
  t.is((await membership.get_admin!()).result, accounts.admin);
  const nonMembership = (await client(contracts.asp_non_membership)) as unknown as Methods;
  // functions that can fail return Result<T, Error> in the spec: the typed client answers Ok(value)
  const found = ((await nonMembership.find_key!({ key: 7n })).result as contract.Result<FindResult>).unwrap();
  t.is(found.found, false);
  t.true(Array.isArray(found.siblings));

  // the verifier rejects an all-zero proof with its own error, which the typed client names from the spec
  const verifier = (await client(contracts.verifier)) as unknown as Methods;
  const zeroProof = { a: Buffer.alloc(64), b: Buffer.alloc(128), c: Buffer.alloc(64) };
  const rejected = await verifier.verify!({ proof: zeroProof, public_inputs: Array(11).fill(0n) });
  const result = rejected.result as contract.Result<unknown>;
  t.true(result.isErr());
  t.is(result.unwrapErr().message, 'InvalidProof');
  t.is(contractErrorOf(rejected.simulation, contracts)?.name, 'InvalidProof');
});

test('contract.Client.from: signed write calls on the ASP contracts and the pool', async (t) => {
  const { contracts, accounts } = sandbox.info;
  const membership = (await client(contracts.asp_membership, admin)) as unknown as Methods;
  const before = (await membership.get_root!()).result as bigint;
  const sent = await (await membership.insert_leaf!({ leaf: 42n })).signAndSend();
  t.is(sent.getTransactionResponse?.status, rpc.Api.GetTransactionStatus.SUCCESS);
  t.not((await membership.get_root!()).result, before);

  const nonMembership = (await client(contracts.asp_non_membership, admin)) as unknown as Methods;
  await (await nonMembership.insert_leaf!({ key: 99n, value: 1n })).signAndSend();
  t.is(
    ((await nonMembership.find_key!({ key: 99n })).result as contract.Result<FindResult>).unwrap().found,
    true,
  );

  const pool = (await client(contracts.pool, admin)) as unknown as Methods;
  const set = await (await pool.set_payout_wallet!({ wallet: accounts.poolWallet })).signAndSend();
  t.is(set.getTransactionResponse?.status, rpc.Api.GetTransactionStatus.SUCCESS);
});

test('calls that do not match the published interface are refused as the host refuses them', async (t) => {
  const { contracts } = sandbox.info;
  const probe = new Account(admin.publicKey(), '1');
  const simulate = (fn: string, args: xdr.ScVal[]) =>
    server.simulateTransaction(invokeTx(probe, contracts.asp_membership, fn, args));
  const refused = async (fn: string, args: xdr.ScVal[], error: string) => {
    const sim = await simulate(fn, args);
    t.true(rpc.Api.isSimulationError(sim), `${fn} must be refused`);
    if (rpc.Api.isSimulationError(sim)) {
      t.true(sim.error.includes(error), sim.error);
      t.is(contractErrorOf(sim, contracts), undefined, 'not a contract error');
    }
  };
  // the contract's argument conversion traps on a value of another type (the module is built panic=abort)
  await refused('insert_leaf', [xdr.ScVal.scvU32(1)], 'Error(WasmVm, InvalidAction)');
  // the VM refuses a call with the wrong number of arguments before the contract runs
  await refused('insert_leaf', [], 'Error(WasmVm, UnexpectedSize)');
  await refused('hash_pair', [xdr.ScVal.scvU32(1), xdr.ScVal.scvU32(2)], 'Error(WasmVm, InvalidAction)');
  await refused('no_such_function', [], 'Error(WasmVm, MissingValue)');
  // a struct with a missing field, and a BytesN of the wrong length, against the verifier's spec
  const short = xdr.ScVal.scvMap([
    new xdr.ScMapEntry({ key: xdr.ScVal.scvSymbol('a'), val: xdr.ScVal.scvBytes(Buffer.alloc(64)) }),
    new xdr.ScMapEntry({ key: xdr.ScVal.scvSymbol('b'), val: xdr.ScVal.scvBytes(Buffer.alloc(128)) }),
  ]);
  const wrongLength = xdr.ScVal.scvMap(
    (['a', 'b', 'c'] as const).map(
      (k) => new xdr.ScMapEntry({ key: xdr.ScVal.scvSymbol(k), val: xdr.ScVal.scvBytes(Buffer.alloc(63)) }),
    ),
  );
  for (const proof of [short, wrongLength]) {
    const sim = await server.simulateTransaction(
      invokeTx(probe, contracts.verifier, 'verify', [proof, xdr.ScVal.scvVec([])]),
    );
    t.true(rpc.Api.isSimulationError(sim) && sim.error.includes('Error(WasmVm, InvalidAction)'));
  }
  // a well-typed call still runs
  const ok = await simulate('get_root', []);
  t.true(rpc.Api.isSimulationSuccess(ok));
});
