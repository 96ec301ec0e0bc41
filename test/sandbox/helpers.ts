// Shared setup for the sandbox tests: a sandbox on a free loopback port with fast ledgers, an rpc.Server
// client, and small transaction helpers that go through the SDK exactly as client code does.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Account,
  Address,
  Contract,
  Keypair,
  nativeToScVal,
  Operation,
  rpc,
  scValToNative,
  TransactionBuilder,
  type xdr,
} from '#stellar-sdk';
import { type PoolSandbox, startPoolSandbox } from '../../src/deploy/sandbox-network.ts';
import { DEFAULT_VKEY_PATH, type VerificationKeyInput } from '../../src/deploy/verification-key.ts';
import { STANDALONE_PASSPHRASE } from '../../src/ledger/networks.ts';

/** The verification key `npm run build` produces for policy_tx_2_2 (genesis deploys the verifier with it). */
export function testVkey(): string {
  if (!existsSync(DEFAULT_VKEY_PATH))
    throw new Error(`${DEFAULT_VKEY_PATH} is missing: run \`npm run build\` first`);
  return DEFAULT_VKEY_PATH;
}

export function tempDir(): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-test-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export async function startSandbox(
  opts: { dataDir?: string; ledgerMs?: number; vkey?: VerificationKeyInput; port?: number } = {},
) {
  const sandbox = await startPoolSandbox({
    port: opts.port ?? 0,
    ledgerMs: opts.ledgerMs ?? 20,
    dataDir: opts.dataDir,
    vkey: opts.vkey ?? testVkey(),
  });
  const server = new rpc.Server(sandbox.rpcUrl, { allowHttp: true });
  return { sandbox, server };
}

export async function fund(sandbox: PoolSandbox, address: string, usdc?: string): Promise<Response> {
  const q = new URLSearchParams({ addr: address, ...(usdc !== undefined && { usdc }) });
  return fetch(`${sandbox.url}/friendbot?${q}`);
}

export function invokeTx(source: Account, contractId: string, fn: string, args: xdr.ScVal[], timeout = 60) {
  return new TransactionBuilder(source, { fee: '100', networkPassphrase: STANDALONE_PASSPHRASE })
    .addOperation(new Contract(contractId).call(fn, ...args))
    .setTimeout(timeout)
    .build();
}

export async function tokenBalance(server: rpc.Server, token: string, who: string): Promise<bigint> {
  const probe = new Account(Keypair.random().publicKey(), '0');
  const sim = await server.simulateTransaction(
    invokeTx(probe, token, 'balance', [new Address(who).toScVal()]),
  );
  if (!rpc.Api.isSimulationSuccess(sim)) throw new Error(`balance simulation failed: ${sim.error}`);
  return BigInt(scValToNative(sim.result!.retval));
}

export const i128 = (n: bigint) => nativeToScVal(n, { type: 'i128' });
export const address = (a: string) => new Address(a).toScVal();

/** Sends a signed transaction and waits for its final status. */
export async function submit(server: rpc.Server, tx: Parameters<rpc.Server['sendTransaction']>[0]) {
  const sent = await server.sendTransaction(tx);
  if (sent.status !== 'PENDING') return { sent, final: undefined };
  const final = await server.pollTransaction(sent.hash, { attempts: 200, sleepStrategy: () => 20 });
  return { sent, final };
}

/** Builds an invokeHostFunction transaction with explicit auth entries and a simulation's resources. */
export function txWithAuth(
  source: Account,
  call: xdr.Operation,
  auth: xdr.SorobanAuthorizationEntry[],
  sim: rpc.Api.SimulateTransactionSuccessResponse,
  opts: { passphrase?: string; timeout?: number } = {},
) {
  const body = call.body.value as xdr.InvokeHostFunctionOp;
  return new TransactionBuilder(source, {
    fee: '100',
    networkPassphrase: opts.passphrase ?? STANDALONE_PASSPHRASE,
  })
    .setSorobanData(sim.transactionData.build())
    .addOperation(Operation.invokeHostFunction({ func: body.hostFunction, auth }))
    .setTimeout(opts.timeout ?? 60)
    .build();
}
