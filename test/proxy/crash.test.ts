// Money survives a power cut: `pool-proxy start` (sandbox, prover daemon and proxy in one process) is killed
// with SIGKILL at each step of a withdrawal and of an operator deposit (fault injection), and restarted on the
// same data directory. After every restart the books must match the chain: the agent's API balance equals
// the pool contract's USDC (this sandbox has no other depositor), nothing is credited or debited twice, and
// in the end the agent withdraws its whole balance.
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Account,
  Address,
  Contract,
  Keypair,
  rpc,
  scValToNative,
  TransactionBuilder,
} from '@stellar/stellar-sdk';
import { freeLoopbackPort as freePort } from '../../src/listen.ts';
import { type CliRun, runCli } from '../helpers/cli.ts';

const USDC = 10_000_000n;
const STEPS = ['before-prove', 'during-prove', 'before-send', 'after-send', 'after-confirm'];
const AGENT = 'crash-agent';

type Service = CliRun;

let dataDir: string;
let ports: { sandbox: number; prover: number; proxy: number; facilitator: number; demo: number };
const proxyUrl = (path: string) => `http://127.0.0.1:${ports.proxy}${path}`;
const operator = { 'content-type': 'application/json', 'x-pool-operator': 'true' };

async function startService(fault?: string): Promise<Service> {
  const env: Record<string, string | undefined> = {
    POOL_PROXY_PORT: String(ports.proxy),
    POOL_PROXY_TX_TIMEOUT_SECONDS: '10',
    POOL_PROXY_RECONCILE_INTERVAL_MS: '500',
    POOL_PROXY_INDEXER_POLL_MS: '100',
    POOL_PROXY_BATCH_WINDOW_MS: '200',
    POOL_PROXY_SETTLE_INTERVAL_MS: '1000',
    // a payment killed after it was sent is released once its authorization expires: keep that short
    POOL_PROXY_DEMO_MAX_TIMEOUT_SECONDS: '30',
    POOL_PROXY_FACILITATOR_CHANNELS: '2',
    POOL_PROXY_FAULT: fault,
  };
  const run = runCli(
    [
      'start',
      '--data-dir',
      dataDir,
      '--sandbox',
      `127.0.0.1:${ports.sandbox}`,
      '--prover',
      `127.0.0.1:${ports.prover}`,
      '--ledger-ms',
      '250',
      '--facilitator',
      `127.0.0.1:${ports.facilitator}`,
      '--demo',
      `127.0.0.1:${ports.demo}`,
    ],
    env,
  );
  await run.waitFor(/"msg":"ready\."/);
  return run;
}

async function usdcOf(address: string): Promise<bigint> {
  const info = await (await fetch(`http://127.0.0.1:${ports.sandbox}/sandbox/info`)).json();
  const server = new rpc.Server(`http://127.0.0.1:${ports.sandbox}/rpc`, { allowHttp: true });
  const tx = new TransactionBuilder(new Account(info.accounts.operator, '0'), {
    fee: '100',
    networkPassphrase: info.networkPassphrase,
  })
    .addOperation(new Contract(info.contracts.token).call('balance', new Address(address).toScVal()))
    .setTimeout(30)
    .build();
  const sim = await server.simulateTransaction(tx);
  if (!rpc.Api.isSimulationSuccess(sim)) throw new Error(sim.error);
  return BigInt(scValToNative(sim.result!.retval));
}

async function poolContract(): Promise<string> {
  return (await (await fetch(`http://127.0.0.1:${ports.sandbox}/sandbox/info`)).json()).contracts.pool;
}

async function apiBalance(): Promise<bigint> {
  const res = await fetch(proxyUrl(`/api/balance/${AGENT}`), { headers: operator });
  if (res.status === 404) return 0n;
  const body = await res.json();
  const [int, frac] = (body.balance as string).split('.');
  return BigInt(int) * USDC + BigInt(frac);
}

/**
 * Waits until reconciliation and settlement have decided everything: API balance = pool USDC (this agent is
 * the only depositor, and once its payment debts are settled its notes are the pool's whole balance).
 */
async function booksMatchChain(t: { is: (a: unknown, b: unknown, m?: string) => void }, label: string) {
  const pool = await poolContract();
  let api = -1n;
  let chain = -2n;
  for (let i = 0; i < 240 && api !== chain; i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, 250));
    [api, chain] = await Promise.all([apiBalance(), usdcOf(pool)]);
  }
  t.is(api, chain, `${label}: API balance equals the pool's USDC on chain`);
  return api;
}

async function killedAt(service: Service, request: () => Promise<unknown>): Promise<void> {
  void request().catch(() => undefined);
  const timeout = new Promise((_, reject) =>
    setTimeout(() => reject(new Error(`the fault never fired:\n${service.output()}`)), 120_000).unref(),
  );
  await Promise.race([service.exited, timeout]);
  if (!/fault injection: killing the process at /.test(service.output()))
    throw new Error(`the process died, but not at the fault:\n${service.output()}`);
}

test.before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'pool-proxy-crash-'));
  ports = {
    sandbox: await freePort(),
    prover: await freePort(),
    proxy: await freePort(),
    facilitator: await freePort(),
    demo: await freePort(),
  };
});
test.after.always(() => rmSync(dataDir, { recursive: true, force: true }));

test.serial(
  'kill -9 at every step of a withdrawal and an operator deposit loses and doubles nothing',
  async (t) => {
    let service = await startService();
    const deposit = (amount: string) =>
      fetch(proxyUrl('/api/deposit'), {
        method: 'POST',
        headers: operator,
        body: JSON.stringify({ agentId: AGENT, amount }),
      });
    const destination = Keypair.random().publicKey();
    const funded = await fetch(`http://127.0.0.1:${ports.sandbox}/friendbot?addr=${destination}`);
    t.true(funded.ok);
    const first = await deposit('10');
    t.is(first.status, 200, await first.text());
    service.child.kill('SIGKILL');
    await service.exited;

    const withdraw = (amount: string) =>
      fetch(proxyUrl('/api/withdraw'), {
        method: 'POST',
        headers: operator,
        body: JSON.stringify({ agentId: AGENT, amount, destination }),
      });
    for (const step of STEPS) {
      service = await startService(`withdraw:${step}`);
      await booksMatchChain(t, `before withdraw:${step}`);
      await killedAt(service, () => withdraw('1'));
    }
    for (const step of STEPS) {
      service = await startService(`operator_deposit:${step}`);
      await booksMatchChain(t, `before operator_deposit:${step}`);
      await killedAt(service, () => deposit('1'));
    }

    service = await startService();
    try {
      const left = await booksMatchChain(t, 'after the last crash');
      const pool = await poolContract();
      // Conservation: what left the pool is exactly what the destination received.
      const deposited = left + (await usdcOf(destination));
      t.true(deposited >= 10n * USDC && deposited <= 15n * USDC, `deposited ${deposited}`);
      t.true((deposited - 10n * USDC) % USDC === 0n, 'each deposit landed whole or not at all');
      const whole = `${left / USDC}.${(left % USDC).toString().padStart(7, '0')}`;
      const all = await withdraw(whole);
      t.is(all.status, 200, await all.text());
      t.is(await apiBalance(), 0n);
      t.is(await usdcOf(pool), 0n);
      t.is(await usdcOf(destination), deposited);
    } finally {
      service.child.kill('SIGTERM');
      await service.exited;
    }
  },
);
