// Shared setup for the x402 tests: a sandbox on a free loopback port, friendbot funding, token balances
// read by simulation, a paid service on node:http around any x402ResourceServer, and payload tampering.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  Account,
  Address,
  authorizeEntry,
  Contract,
  Keypair,
  nativeToScVal,
  Operation,
  rpc,
  scValToNative,
  TransactionBuilder,
  xdr,
} from '#stellar-sdk';
import { type RoutesConfig, x402HTTPResourceServer, type x402ResourceServer } from '@x402/core/server';
import type { PaymentPayload } from '@x402/core/types';
import { type PoolSandbox, startPoolSandbox } from '../../src/deploy/sandbox-network.ts';
import { paidRequestListener, type PaidHandler } from '../../src/x402/paid-http.ts';
import {
  isX402Error,
  sign,
  type PayerNetwork,
  type Quote,
  type SignedPayment,
} from '../../src/x402/index.ts';
import { testVkey } from '../sandbox/helpers.ts';

export async function startSandbox(
  opts: { ledgerMs?: number; networkPassphrase?: string; clock?: () => number } = {},
) {
  const sandbox = await startPoolSandbox({
    port: 0,
    ledgerMs: opts.ledgerMs ?? 100,
    vkey: testVkey(),
    networkPassphrase: opts.networkPassphrase,
    clock: opts.clock,
  });
  return { sandbox, server: new rpc.Server(sandbox.rpcUrl, { allowHttp: true }) };
}

/** Creates (and optionally gives USDC to) an account through friendbot. */
export async function fund(sandbox: PoolSandbox, addr: string, usdc?: string): Promise<void> {
  const q = new URLSearchParams({ addr, ...(usdc !== undefined && { usdc }) });
  const res = await fetch(`${sandbox.url}/friendbot?${q}`);
  if (!res.ok) throw new Error(`friendbot: ${await res.text()}`);
}

export async function newAccount(sandbox: PoolSandbox, usdc?: string): Promise<Keypair> {
  const kp = Keypair.random();
  await fund(sandbox, kp.publicKey(), usdc);
  return kp;
}

export async function tokenBalance(
  server: rpc.Server,
  passphrase: string,
  token: string,
  who: string,
): Promise<bigint> {
  const tx = new TransactionBuilder(new Account(Keypair.random().publicKey(), '0'), {
    fee: '100',
    networkPassphrase: passphrase,
  })
    .addOperation(new Contract(token).call('balance', new Address(who).toScVal()))
    .setTimeout(30)
    .build();
  const sim = await server.simulateTransaction(tx);
  if (!rpc.Api.isSimulationSuccess(sim)) throw new Error(`balance: ${sim.error}`);
  return BigInt(scValToNative(sim.result!.retval));
}

/** Waits until the ledger is past `sequence`. */
export async function waitPastLedger(server: rpc.Server, sequence: number): Promise<void> {
  while ((await server.getLatestLedger()).sequence <= sequence) await new Promise((r) => setTimeout(r, 50));
}

/** A paid service on 127.0.0.1 (free port) for `routes`, answering with `handler`. */
export async function startPaidService(
  resourceServer: x402ResourceServer,
  routes: RoutesConfig,
  handler: PaidHandler,
) {
  const paid = new x402HTTPResourceServer(resourceServer, routes);
  await paid.initialize();
  const server: Server = createServer(paidRequestListener(paid, handler));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The payload with one byte of the payer's Ed25519 signature flipped (the envelope stays well-formed). */
export function withBadSignature(payload: PaymentPayload): PaymentPayload {
  const txXdr = String(payload.payload.transaction);
  const env = xdr.TransactionEnvelope.fromXdr(txXdr, 'base64');
  const op = (env.value as xdr.TransactionV1Envelope).tx.operations[0]!;
  const creds = (op.body.value as xdr.InvokeHostFunctionOp).auth[0]!.credentials
    .value as xdr.SorobanAddressCredentials;
  const [{ signature }] = scValToNative(creds.signature) as [{ signature: Buffer }];
  const raw = Buffer.from(txXdr, 'base64');
  const at = raw.indexOf(Buffer.from(signature));
  if (at < 0) throw new Error('signature not found in the envelope');
  raw[at + 10] = (raw[at + 10] as number) ^ 0xff;
  return { ...payload, payload: { ...payload.payload, transaction: raw.toString('base64') } };
}

/** `base` with its transaction rebuilt on CAP-71 v2 address credentials (the SDK 17 default). */
export async function withV2Credentials(
  server: rpc.Server,
  passphrase: string,
  payer: Keypair,
  base: PaymentPayload,
): Promise<PaymentPayload> {
  const { asset, payTo, amount } = base.accepted;
  const call = new Contract(asset).call(
    'transfer',
    new Address(payer.publicKey()).toScVal(),
    new Address(payTo).toScVal(),
    nativeToScVal(BigInt(amount), { type: 'i128' }),
  );
  const build = (op: xdr.Operation) =>
    new TransactionBuilder(new Account(Keypair.random().publicKey(), '0'), {
      fee: '100',
      networkPassphrase: passphrase,
    })
      .addOperation(op)
      .setTimeout(60)
      .build();
  const recorded = await server.simulateTransaction(build(call), undefined, undefined, true);
  if (!rpc.Api.isSimulationSuccess(recorded)) throw new Error(recorded.error);
  const entry = recorded.result!.auth[0]!;
  if (entry.credentials.type !== 'sorobanCredentialsAddressV2') throw new Error('expected v2 credentials');
  const latest = (await server.getLatestLedger()).sequence;
  const signed = await authorizeEntry(entry, payer, latest + 20, passphrase);
  const body = call.body.value as xdr.InvokeHostFunctionOp;
  const withAuth = build(Operation.invokeHostFunction({ func: body.hostFunction, auth: [signed] }));
  const enforced = await server.simulateTransaction(withAuth);
  if (!rpc.Api.isSimulationSuccess(enforced)) throw new Error(enforced.error);
  const tx = rpc.assembleTransaction(withAuth, enforced).build();
  return { ...base, payload: { transaction: tx.toXDR() } };
}

/**
 * Signs `q` valid for only a few ledgers, so the test can wait until it has expired. On a loaded machine
 * signing itself can outlast a few ledgers (the re-simulation then sees it expired): retry with more.
 */
export async function signExpiringSoon(
  q: Quote,
  signer: Keypair,
  payer: PayerNetwork,
): Promise<SignedPayment> {
  for (const ledgers of [6, 12, 24, 48]) {
    try {
      return await sign(q, signer, { ...payer, ledgerSeconds: q.maxTimeoutSeconds / ledgers });
    } catch (e) {
      if (!isX402Error(e, 'simulation_failed')) throw e;
    }
  }
  throw new Error('could not sign a short-lived authorization');
}
