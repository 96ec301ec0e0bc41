// Shared setup for the sandbox tests: a sandbox on a free loopback port with fast ledgers, an rpc.Server
// client, and small transaction helpers that go through the SDK exactly as client code does.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bn254 } from '@noble/curves/bn254.js';
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
} from '@stellar/stellar-sdk';
import { DEFAULT_VKEY_PATH, Sandbox, STANDALONE_PASSPHRASE } from '../../src/sandbox/index.ts';

/** A well-formed Groth16 key (generator multiples) for tests that never verify a proof. */
function generatorVkey(nPublic: number) {
  const g1 = (k: bigint) => {
    const p = bn254.G1.Point.BASE.multiply(k).toAffine();
    return [p.x.toString(), p.y.toString(), '1'];
  };
  const g2 = (k: bigint) => {
    const p = bn254.G2.Point.BASE.multiply(k).toAffine();
    return [
      [p.x.c0.toString(), p.x.c1.toString()],
      [p.y.c0.toString(), p.y.c1.toString()],
      ['1', '0'],
    ];
  };
  return {
    protocol: 'groth16',
    curve: 'bn128',
    nPublic,
    vk_alpha_1: g1(2n),
    vk_beta_2: g2(3n),
    vk_gamma_2: g2(5n),
    vk_delta_2: g2(7n),
    IC: Array.from({ length: nPublic + 1 }, (_, i) => g1(BigInt(11 + i))),
  };
}

/** The built circuit key when `npm run build` has produced it, else a structurally valid one. */
export function testVkey(): string | Record<string, unknown> {
  return existsSync(DEFAULT_VKEY_PATH) ? DEFAULT_VKEY_PATH : generatorVkey(11);
}

export function tempDir(): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-test-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export async function startSandbox(
  opts: { dataDir?: string; ledgerMs?: number; vkey?: string | Record<string, unknown>; port?: number } = {},
) {
  const sandbox = await Sandbox.start({
    port: opts.port ?? 0,
    ledgerMs: opts.ledgerMs ?? 20,
    dataDir: opts.dataDir,
    vkey: opts.vkey ?? testVkey(),
  });
  const server = new rpc.Server(sandbox.rpcUrl, { allowHttp: true });
  return { sandbox, server };
}

export async function fund(sandbox: Sandbox, address: string, usdc?: string): Promise<Response> {
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
