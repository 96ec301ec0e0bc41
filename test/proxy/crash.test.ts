// Money survives a power cut: the proxy (`pool-proxy serve` on a LevelDB store, against a sandbox, a prover
// daemon and the local x402 pair that keep running, as the chain and the provers do when a proxy host dies)
// is killed with SIGKILL at each step of a withdrawal and of an operator deposit, then at the steps of a
// settlement transfer and of a float refill where their books differ (fault injection), and restarted on the
// same data directory. After every restart the books must match the chain: the agent's API balance equals the
// pool contract's USDC less the float account's notes (this sandbox has no other depositor), nothing is
// credited or debited twice, the pool wallet's float comes back whole, and in the end the agent withdraws its
// whole balance. The pool's trees take 4 leaves (two transactions), so every other transaction opens a new
// tree: some of the transactions in flight when the process dies are the ones that open a tree.
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Keypair } from '#stellar-sdk';
import type { ProverDaemon } from '../../src/prover/daemon/server.ts';
import type { CliRun } from '../helpers/cli.ts';
import {
  type ServeRig,
  serveProxy,
  startRigProver,
  startServeRig,
  usdcOf as usdcOn,
} from './helpers/serve-rig.ts';
import { operatorHeadersFrom } from './helpers/proxy.ts';

const USDC = 10_000_000n;
const STEPS = ['before-prove', 'during-prove', 'before-send', 'after-send', 'after-confirm'];
/** The pool wallet's float, funded by the friendbot on each test's new sandbox. */
const FLOAT = 1000n * 10_000_000n;
const AGENT = 'crash-agent';

type Service = CliRun;

let daemon: ProverDaemon;
/** Each test's own rig (sandbox, x402 pair) and data directory: one never meets another's leftovers. */
let place: ServeRig & { dataDir: string };
let proxyBase = '';
const proxyUrl = (path: string) => `${proxyBase}${path}`;
/** The operator's token, from the data directory the service keeps it in. */
const operator = () => ({
  'content-type': 'application/json',
  ...operatorHeadersFrom(join(place.dataDir, 'operator.token')),
});

test.before(async () => {
  daemon = await startRigProver();
});

const places: Array<typeof place> = [];
const runs: CliRun[] = [];
test.beforeEach(async () => {
  const rig = await startServeRig({
    prover: daemon.address,
    poolWalletUsdc: Number(FLOAT / USDC),
    // a payment killed after it was sent is released once its authorization expires: keep that short
    demoMaxTimeoutSeconds: 30,
    channelCount: 2,
    treeCapacity: 4,
  });
  place = { ...rig, dataDir: mkdtempSync(join(tmpdir(), 'pool-proxy-crash-')) };
  places.push(place);
});
test.after.always(async () => {
  for (const run of runs) run.child.kill('SIGKILL');
  for (const p of places) {
    await p.close();
    rmSync(p.dataDir, { recursive: true, force: true });
  }
  await daemon?.stop({ force: true });
});

async function startService(fault?: string): Promise<Service> {
  const { run, url } = await serveProxy(
    place.dataDir,
    {
      ...place.env,
      POOL_PROXY_TX_TIMEOUT_SECONDS: '10',
      POOL_PROXY_RECONCILE_INTERVAL_MS: '500',
      POOL_PROXY_INDEXER_POLL_MS: '100',
      POOL_PROXY_BATCH_WINDOW_MS: '200',
      POOL_PROXY_SETTLE_INTERVAL_MS: '1000',
      // rounds of two transfers (the agent's settlement and a padding transfer); every payment is refilled
      POOL_PROXY_SETTLE_ROUND_SIZE: '2',
      POOL_PROXY_FLOAT_TARGET: '1000',
      POOL_PROXY_FLOAT_LOW: '1000',
      POOL_PROXY_FLOAT_UNIT: '0.01',
      POOL_PROXY_FLOAT_REFILL_INTERVAL_MS: '1000',
      POOL_PROXY_FAULT: fault,
    },
    runs,
  );
  proxyBase = url;
  return run;
}

async function usdcOf(address: string): Promise<bigint> {
  return usdcOn(place.sandbox, address);
}

async function poolContract(): Promise<string> {
  return place.sandbox.info.contracts.pool;
}

async function apiBalance(): Promise<bigint> {
  const res = await fetch(proxyUrl(`/api/balance/${AGENT}`), { headers: operator() });
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

/** Where the pool's trees stand, as the running proxy has read them. */
async function trees(): Promise<{ count: number; leavesFree: number }> {
  const info = (await fetch(proxyUrl('/api/pool/info')).then((r) => r.json())) as {
    trees: { count: number; leavesFree: number };
  };
  return info.trees;
}

/** Kills that hit a transaction opening a new tree after it was sent (counted for the assertion below). */
let openersKilled = 0;

async function killedAt(service: Service, request: () => Promise<unknown>, step?: string): Promise<void> {
  if ((step === 'after-send' || step === 'after-confirm') && (await trees()).leavesFree === 0)
    openersKilled++;
  void request().catch(() => undefined);
  const timeout = new Promise((_, reject) =>
    setTimeout(() => reject(new Error(`the fault never fired:\n${service.output()}`)), 120_000).unref(),
  );
  await Promise.race([service.exited, timeout]);
  if (!/fault injection: killing the process at /.test(service.output()))
    throw new Error(`the process died, but not at the fault:\n${service.output()}`);
}

test.serial(
  'kill -9 at every step of a withdrawal and an operator deposit loses and doubles nothing',
  async (t) => {
    let service = await startService();
    t.teardown(() => void service.child.kill('SIGKILL'));
    const deposit = (amount: string) =>
      fetch(proxyUrl('/api/deposit'), {
        method: 'POST',
        headers: operator(),
        body: JSON.stringify({ agentId: AGENT, amount }),
      });
    const destination = Keypair.random().publicKey();
    const funded = await fetch(`${place.sandbox.url}/friendbot?addr=${destination}`);
    t.true(funded.ok);
    const first = await deposit('10');
    t.is(first.status, 200, await first.text());
    service.child.kill('SIGKILL');
    await service.exited;

    const withdraw = (amount: string) =>
      fetch(proxyUrl('/api/withdraw'), {
        method: 'POST',
        headers: operator(),
        body: JSON.stringify({ agentId: AGENT, amount, destination }),
      });
    for (const step of STEPS) {
      service = await startService(`withdraw:${step}`);
      await booksMatchChain(t, `before withdraw:${step}`);
      await killedAt(service, () => withdraw('1'), step);
    }
    for (const step of STEPS) {
      service = await startService(`operator_deposit:${step}`);
      await booksMatchChain(t, `before operator_deposit:${step}`);
      await killedAt(service, () => deposit('1'), step);
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
      t.true(openersKilled >= 1, 'a transaction that opened a tree was in flight when the process died');
      t.true((await trees()).count >= 4, 'the run opened trees');
    } finally {
      service.child.kill('SIGTERM');
      await service.exited;
    }
  },
);

async function books(): Promise<Record<string, string | boolean>> {
  const res = await fetch(proxyUrl('/api/operator/books'), { headers: operator() });
  if (res.status !== 200) throw new Error(`books: ${res.status} ${await res.text()}`);
  return res.json();
}

const stroops = (s: string | boolean) => BigInt(String(s).replace('.', ''));

/**
 * Waits until everything is decided, settled and refilled: nothing owed or running, pool USDC = the agent's
 * notes + the float account's notes, the agent's API balance = its notes, the pool wallet's float whole.
 */
async function settledAndRefilled(t: { is: (a: unknown, b: unknown, m?: string) => void }, label: string) {
  const pool = await poolContract();
  let state = '';
  let expected = '';
  for (let i = 0; i < 480; i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, 250));
    const [b, api, chain, wallet] = await Promise.all([
      books(),
      apiBalance(),
      usdcOf(pool),
      usdcOf(String((await fetch(proxyUrl('/api/pool/info')).then((r) => r.json())).poolWallet)),
    ]);
    state = JSON.stringify({
      unsettled: stroops(b.unsettled).toString(),
      settling: b.settling,
      pool: chain.toString(),
      notes: (stroops(b.agentNotes) + stroops(b.floatAccount)).toString(),
      api: api.toString(),
      agent: stroops(b.agentNotes).toString(),
      wallet: wallet.toString(),
    });
    expected = JSON.stringify({
      unsettled: '0',
      settling: false,
      pool: chain.toString(),
      notes: chain.toString(),
      api: api.toString(),
      agent: api.toString(),
      wallet: FLOAT.toString(),
    });
    if (state === expected) break;
  }
  t.is(state, expected, `${label}: books match the chain and the float is whole`);
}

test.serial(
  'kill -9 at the steps of a settlement transfer and a float refill where their books differ loses and doubles nothing',
  async (t) => {
    let service = await startService();
    t.teardown(() => void service.child.kill('SIGKILL'));
    const deposit = await fetch(proxyUrl('/api/deposit'), {
      method: 'POST',
      headers: operator(),
      body: JSON.stringify({ agentId: AGENT, amount: '1' }),
    });
    t.is(deposit.status, 200, await deposit.text());
    const demo = String((await (await fetch(proxyUrl('/api/pool/info'))).json()).payments.demoServiceUrl);
    const pay = async () => {
      const res = await fetch(proxyUrl('/api/pay'), {
        method: 'POST',
        headers: operator(),
        body: JSON.stringify({ agentId: AGENT, serviceUrl: demo, method: 'GET' }),
      });
      if (res.status !== 200) throw new Error(`pay: ${await res.text()}`);
    };
    await settledAndRefilled(t, 'after the deposit');
    service.child.kill('SIGKILL');
    await service.exited;
    let paid = 0n;
    // Settlement and refills are relays (flows/relay.ts) like a withdrawal, whose every step the first test
    // kills; here the steps where their own bookkeeping differs: a proof in flight (the debt is still owed),
    // a transfer sent but not recorded, one confirmed but its debt or refill not yet booked.
    for (const fault of [
      'settlement:during-prove',
      'settlement:after-send',
      'settlement:after-confirm',
      'float_refill:after-send',
      'float_refill:after-confirm',
    ]) {
      // The payment goes through; the settlement round or the refill after it is killed. (A restart with the
      // fault still set would die again while recovering, so the books are checked by a restart without it.)
      service = await startService(fault);
      await killedAt(service, async () => {
        await pay();
        paid += 100_000n;
      });
      service = await startService();
      await settledAndRefilled(t, `after ${fault}`);
      service.child.kill('SIGKILL');
      await service.exited;
    }
    service = await startService();
    try {
      await settledAndRefilled(t, 'after the last crash');
      t.is(paid, 5n * 100_000n, 'every payment before a kill was answered');
      t.is(await apiBalance(), USDC - paid, 'the agent paid each price once');
      const left = await apiBalance();
      const destination = Keypair.random().publicKey();
      t.true((await fetch(`${place.sandbox.url}/friendbot?addr=${destination}`)).ok);
      // (On a loaded machine the 10 s time bound can pass before the ledger applies it: ledger_rejected
      // txTooLate, nothing applied; the withdrawal is asked again.)
      let all: Response | undefined;
      for (let attempt = 0; attempt < 3 && all?.status !== 200; attempt++) {
        all = await fetch(proxyUrl('/api/withdraw'), {
          method: 'POST',
          headers: operator(),
          body: JSON.stringify({
            agentId: AGENT,
            amount: `${left / USDC}.${(left % USDC).toString().padStart(7, '0')}`,
            destination,
          }),
        });
      }
      t.is(all?.status, 200, await all?.text());
      t.is(await usdcOf(destination), left);
    } finally {
      service.child.kill('SIGTERM');
      await service.exited;
    }
  },
);
