// kill -9 among replicas (`pool-proxy serve` processes on one PostgreSQL store, with the sandbox, a real
// prover daemon and the local x402 pair). Payments are asked of the two replicas that do not lead; the batch
// leader takes them into one batch and dies in its middle (fault injection at `payment:after-send`), more
// payments arrive while it is gone, then the new leader of settlement dies while its settlement is on the
// ledger (`settlement:after-send`); a fourth replica, started meanwhile, keeps the deployment up. Every payment ends confirmed exactly once or released (the dead leader's by
// reconciliation, the later ones executed by the next leader), the requests waiting on a replica that lives
// get their outcomes, a new leader is elected within 10 s of each death, the agent's debt is settled inside
// the pool once, and every balance adds up. Every request is well-formed and goes through PoolApi, on the
// replica asked; one asked of a replica that dies is refused with status 0 (proxy_unreachable).
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import pg from 'pg';
import type { PoolSandbox } from '../../src/deploy/sandbox-network.ts';
import type { LocalX402Thread } from '../../src/cli/threads/x402-thread.ts';
import type { ProverDaemon } from '../../src/prover/daemon/server.ts';
import type { CliRun } from '../helpers/cli.ts';
import { type PostgresServer, startPostgres } from '../helpers/postgres.ts';
import type { PaymentResult } from '../../src/api/types.ts';
import { operatorApi, type PoolApi, PoolApiError } from './helpers/api.ts';
import {
  type ServeRig,
  serveProxy,
  startRigProver,
  startServeRig,
  usdcOf as usdcOfOn,
} from './helpers/serve-rig.ts';
import { USDC } from './helpers/stack.ts';

/** The operator's token, the same for every replica (they share its file; the first one up creates it). */
const operatorTokenFile = join(mkdtempSync(join(tmpdir(), 'pp-failover-operator-')), 'operator.token');
const operatorOf = () => ({ authorization: `Bearer ${readFileSync(operatorTokenFile, 'utf8').trim()}` });
/** The operator's client on the replica at `url`. */
const op = (url: string): PoolApi => operatorApi(url, operatorOf());
const PRICE = USDC / 100n;
const AGENT = 'failover-agent';

let pgServer: PostgresServer;
let sandbox: PoolSandbox;
let daemon: ProverDaemon;
let x402: LocalX402Thread;
let rig: ServeRig;
let databaseUrl: string;
let baseEnv: Record<string, string | undefined>;
const replicas: CliRun[] = [];

test.before(async () => {
  pgServer = await startPostgres();
  databaseUrl = await pgServer.database();
  daemon = await startRigProver();
  // authorizations of payments that were signed but never sent expire (and are released) sooner
  rig = await startServeRig({ prover: daemon.address, poolWalletUsdc: 100, demoMaxTimeoutSeconds: 15 });
  ({ sandbox, x402 } = rig);
  baseEnv = {
    ...rig.env,
    POOL_PROXY_DATABASE_URL: databaseUrl,
    POOL_PROXY_PUBLIC_URL: 'http://pool.test',
    POOL_PROXY_INDEXER_POLL_MS: '100',
    POOL_PROXY_BATCH_WINDOW_MS: '1500',
    POOL_PROXY_SETTLE_INTERVAL_MS: '3000',
    POOL_PROXY_RECONCILE_INTERVAL_MS: '1000',
    POOL_PROXY_LOG_LEVEL: 'info',
    POOL_PROXY_OPERATOR_TOKEN_FILE: operatorTokenFile,
  };
});

test.after.always(async () => {
  await Promise.all(replicas.map((r) => r.stop(2000)));
  await rig?.close();
  await daemon?.stop({ force: true });
  await pgServer?.stop();
});

async function serve(fault: string): Promise<{ run: CliRun; url: string }> {
  return serveProxy(
    mkdtempSync(join(tmpdir(), 'pp-failover-')),
    { ...baseEnv, POOL_PROXY_FAULT: fault },
    replicas,
  );
}

async function epochs(): Promise<Record<string, number>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ job: string; epoch: string }>(
      'SELECT job, epoch FROM leader_epochs',
    );
    return Object.fromEntries(rows.map((r) => [r.job, Number(r.epoch)]));
  } finally {
    await client.end();
  }
}

let lastSeen = '';

async function until<T>(what: string, ms: number, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check().catch((error: Error) => {
      lastSeen = error.message;
      return undefined;
    });
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (last seen: ${lastSeen})`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** '1.2500000' → stroops. */
function stroops(amount: string): bigint {
  return BigInt(amount.replace('.', ''));
}

async function usdcOf(address: string): Promise<bigint> {
  return usdcOfOn(sandbox, address);
}

/** Resolves once `run` exited by its fault (within 3 minutes), with the time of the exit. */
async function died(run: CliRun, fault: string): Promise<number> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no fault ${fault} within 3 minutes:\n${run.output().slice(-4000)}`)),
      180_000,
    );
  });
  await Promise.race([run.exited, late]).finally(() => clearTimeout(timer));
  if (!run.output().includes(`fault injection: killing the process at ${fault}`))
    throw new Error(`the replica died, but not at ${fault}:\n${run.output()}`);
  return Date.now();
}

/** The epochs under which `run` was elected, by job (from its log). */
function ledBy(run: CliRun): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of run.stdout().split('\n')) {
    if (!line.includes('"elected leader"')) continue;
    const { job, epoch } = JSON.parse(line) as { job: string; epoch: number };
    out[job] = epoch;
  }
  return out;
}

/** Waits until every job `dead` led has a successor; resolves with how long that took after `diedAt`. */
async function successors(dead: CliRun, diedAt: number): Promise<number> {
  const led = ledBy(dead);
  await until('a new leader for every job the dead replica led', 30_000, async () => {
    const now = await epochs();
    return Object.entries(led).every(([job, epoch]) => (now[job] ?? 0) > epoch) ? true : undefined;
  });
  return Date.now() - diedAt;
}

/** Resolves with the first of `runs` to exit by `fault` (within 3 minutes), and the time of its exit. */
async function firstDied(runs: CliRun[], fault: string): Promise<{ run: CliRun; at: number }> {
  const run = await Promise.race([
    ...runs.map((r) => r.exited.then(() => r)),
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`no fault ${fault} within 3 minutes`)), 180_000).unref(),
    ),
  ]);
  return { run, at: await died(run, fault) };
}

test('kill -9 mid-batch and during a settlement: nothing lost or doubled, a new leader within 10 s', async (t) => {
  // The first replica up leads every job (the batch operator, reconciliation, settlement) and dies in its
  // batch; of the next two, the one elected for settlement dies at its settlement's send (the other may too,
  // at a later round); a fourth, without a fault, keeps the deployment up to the end.
  const first = await serve('payment:after-send');
  await until('the first replica elected', 30_000, async () =>
    Object.keys(ledBy(first.run)).length === 3 ? true : undefined,
  );
  const others = [await serve('settlement:after-send'), await serve('settlement:after-send')];
  const float = await usdcOf(sandbox.info.accounts.poolWallet);
  const started = Date.now();
  const dep = await op(others[0]!.url).operatorDeposit({ agentId: AGENT, amount: '1' });
  t.is(dep.status, 'confirmed', JSON.stringify(dep));

  /**
   * A payment asked of the replica at `url`: its answer, or its refusal (status 0: the replica did not answer),
   * or how the call broke (a replica killed while it answered).
   */
  const pay = (
    url: string,
  ): Promise<{ url: string; answer?: PaymentResult; refusal?: PoolApiError; broke?: Error }> =>
    op(url)
      .pay({ agentId: AGENT, serviceUrl: x402.demo.quoteUrl, method: 'GET' })
      .then(
        (answer) => ({ url, answer }),
        (error: Error) => (error instanceof PoolApiError ? { url, refusal: error } : { url, broke: error }),
      );
  // Four payments asked of the replicas that do not lead: one batch of the leader, which dies once the
  // first paid request has left. Two more arrive while it is gone: the next leader executes them.
  const asked = [0, 1, 0, 1].map((i) => pay(others[i]!.url));
  const batchDeath = await died(first.run, 'payment:after-send');
  asked.push(...[0, 1].map((i) => pay(others[i]!.url)));
  t.true((await successors(first.run, batchDeath)) < 10_000, 'its jobs have new leaders within 10 s');
  const keeper = await serve('');

  // The confirmed payments become debts; the settlement leader dies at the settlement's send. Another
  // replica is elected, reconciles the settlement first and finishes.
  const settler = await firstDied(
    others.map((o) => o.run),
    'settlement:after-send',
  );
  t.true((await successors(settler.run, settler.at)) < 10_000, 'a new settlement leader within 10 s');
  t.log(`settlement leader killed after ${Math.round((settler.at - started) / 1000)} s`);
  t.teardown(() => {
    if (!t.passed)
      t.log(
        keeper.run
          .output()
          .split('\n')
          .filter((l) => !l.includes('"request"'))
          .slice(-40)
          .join('\n'),
      );
  });

  // Settlement moves the agent's debt inside the pool to the operator's float account (no public amount):
  // the pool keeps its USDC, the float account holds what was paid, the pool wallet's float is lower by it.
  const confirmed = await until('every payment decided and its debt settled', 150_000, async () => {
    const list = (await op(keeper.url).payments(50)).payments;
    const books = await op(keeper.url).books();
    lastSeen = `${list.map((p) => p.paymentStatus).join(',')}; books ${JSON.stringify(books)}`;
    if (list.length !== 6 || list.some((p) => p.paymentStatus === 'pending')) return undefined;
    const paid = BigInt(list.filter((p) => p.paymentStatus === 'confirmed').length);
    const settled = books.unsettled === '0.0000000' && !books.settling;
    return settled && stroops(books.floatAccount) === paid * PRICE ? paid : undefined;
  });
  t.true(confirmed >= 1n, 'the payment sent before the kill is confirmed');
  const listed = (await op(keeper.url).payments(50)).payments;
  // Every request that was answered got its payment's outcome; those asked of a replica still alive all were.
  const answers = await Promise.all(asked);
  const alive = (url: string) => {
    const child = others.find((o) => o.url === url)!.run.child;
    return child.exitCode === null && child.signalCode === null;
  };
  const told = (a: (typeof answers)[number]) =>
    a.answer
      ? a.answer.paymentStatus
      : a.refusal
        ? `${a.refusal.status} ${a.refusal.code}: ${a.refusal.detail} ${JSON.stringify(a.refusal.extra)}`
        : `broke: ${a.broke?.message}`;
  t.log(
    `payments: ${listed.map((p) => p.paymentStatus).join(', ')}; answers: ${answers
      .map((a) => `${told(a)}${alive(a.url) ? '' : ' (asked of a replica killed later)'}`)
      .join(', ')}`,
  );
  for (const a of answers) {
    if ((a.refusal?.status === 0 || a.broke) && !alive(a.url)) continue;
    // an outcome: confirmed (answered 200), or a payment_failed problem (502) that names the payment
    t.true(
      a.answer?.paymentStatus === 'confirmed' ||
        (a.refusal?.status === 502 && a.refusal.code === 'payment_failed'),
      told(a),
    );
    const outcome = a.answer ?? a.refusal?.extra;
    const status = listed.find((p) => p.paymentId === outcome?.paymentId)?.paymentStatus;
    t.is(outcome?.paymentStatus, status, 'the answer is the outcome the books show');
  }
  const { balance } = await op(keeper.url).balance(AGENT);
  t.is(stroops(balance), USDC - confirmed * PRICE, 'each confirmed payment debited once');
  t.is(
    await usdcOf(sandbox.info.contracts.pool),
    USDC,
    "the pool's USDC: the agent's notes and the float account's",
  );
  t.is(
    await usdcOf(sandbox.info.accounts.poolWallet),
    float - confirmed * PRICE,
    'the float paid each payment once',
  );
  t.is(
    await usdcOf(x402.demoPayTo),
    confirmed * PRICE,
    'the service received exactly the confirmed payments',
  );
});
