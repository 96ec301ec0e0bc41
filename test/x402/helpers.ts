// Shared setup for the x402 tests: a sandbox on a free loopback port, friendbot funding, token balances
// read by simulation, a paid service on node:http around any x402ResourceServer, and payload tampering.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  Account,
  Address,
  Contract,
  Keypair,
  rpc,
  scValToNative,
  TransactionBuilder,
  xdr,
} from '@stellar/stellar-sdk';
import { type RoutesConfig, x402HTTPResourceServer, type x402ResourceServer } from '@x402/core/server';
import type { PaymentPayload } from '@x402/core/types';
import { Sandbox } from '../../src/sandbox/index.ts';
import { paidRequestListener, type PaidHandler } from '../../src/x402/paid-http.ts';
import { testVkey } from '../sandbox/helpers.ts';

export async function startSandbox(opts: { ledgerMs?: number; networkPassphrase?: string } = {}) {
  const sandbox = await Sandbox.start({
    port: 0,
    ledgerMs: opts.ledgerMs ?? 100,
    vkey: testVkey(),
    networkPassphrase: opts.networkPassphrase,
  });
  return { sandbox, server: new rpc.Server(sandbox.rpcUrl, { allowHttp: true }) };
}

/** Creates (and optionally gives USDC to) an account through friendbot. */
export async function fund(sandbox: Sandbox, addr: string, usdc?: string): Promise<void> {
  const q = new URLSearchParams({ addr, ...(usdc !== undefined && { usdc }) });
  const res = await fetch(`${sandbox.url}/friendbot?${q}`);
  if (!res.ok) throw new Error(`friendbot: ${await res.text()}`);
}

export async function newAccount(sandbox: Sandbox, usdc?: string): Promise<Keypair> {
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
