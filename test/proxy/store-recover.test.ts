// A damaged proxy store fails loudly and comes back: the real `pool-proxy start` (proxy only, against a
// sandbox ledger and prover daemon run by this test) takes deposits for two agents and stops; one byte of
// its store's write-ahead log is flipped; the next start refuses, naming the file and the recovery
// command; `pool-proxy store recover` moves the store aside; the start after it replays the chain and
// every balance is back. A second process on a store in use is told which process holds it. Last, the ledger's
// RPC is given a retention window and the pool's first events fall out of it: the proxy's own archive of the
// pool's events (exported, set aside and imported again, as an operator moving a deployment would) rebuilds
// every balance, books = chain. Every request is well-formed and goes through PoolApi.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { type ProverDaemon, startProverDaemon } from '../../src/prover/daemon/server.ts';
import { type PoolSandbox, startPoolSandbox } from '../../src/deploy/sandbox-network.ts';
import { EncryptedStore } from '../../src/proxy/store/encrypted-store.ts';
import { StoreLockedError } from '../../src/storage/open-level.ts';
import { Keypair, rpc, TransactionBuilder } from '#stellar-sdk';
import { operatorApi, PoolApi, refused, walletApi } from './helpers/api.ts';
import { checkSessionsEnded, openSessions } from './helpers/sessions.ts';
import { operatorHeadersFrom } from './helpers/proxy.ts';
import { STANDALONE_PASSPHRASE } from '../../src/ledger/networks.ts';
import { CIRCUITS_DIR } from './helpers/stack.ts';
import { usdcOf } from './helpers/serve-rig.ts';
import { freeLoopbackPort as freePort } from '../../src/listen.ts';

const CLI = fileURLToPath(new URL('../../bin/pool-proxy.js', import.meta.url));

let sandbox: PoolSandbox;
let daemon: ProverDaemon;
const dataDir = mkdtempSync(join(tmpdir(), 'pp-recover-'));
const storeDir = join(dataDir, 'proxy-store');
let env: NodeJS.ProcessEnv;

interface Run {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

function cli(args: string[], overrides: NodeJS.ProcessEnv = {}): Run {
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...env, ...overrides } });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  return { child, output: () => output, exited };
}

async function waitFor(run: Run, pattern: RegExp): Promise<void> {
  const deadline = Date.now() + 3 * 60_000;
  while (!pattern.test(run.output())) {
    if (run.child.exitCode !== null) throw new Error(`exited early:\n${run.output()}`);
    if (Date.now() > deadline) throw new Error(`no ${pattern} in:\n${run.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function startService(): Promise<{ run: Run; url: string }> {
  const run = cli(['start', '--data-dir', dataDir]);
  await waitFor(run, /ready\./);
  return { run, url: `http://127.0.0.1:${env.POOL_PROXY_PORT}` };
}

async function stop(run: Run): Promise<void> {
  run.child.kill('SIGTERM');
  if ((await run.exited) !== 0) throw new Error(`stop failed:\n${run.output()}`);
}

/** The operator's client on the service at `url` (its token from the data directory of `start`). */
const op = (url: string): PoolApi => operatorApi(url, operatorHeadersFrom(join(dataDir, 'operator.token')));

/** `wallet` logged in (SEP-53) on the service at `url`: its client. */
async function login(url: string, wallet: Keypair): Promise<PoolApi> {
  const api = new PoolApi({ baseUrl: url });
  const { challenge } = await api.challenge(wallet.publicKey());
  const signature = Buffer.from(wallet.signMessage(challenge)).toString('base64');
  return walletApi(url, (await api.verify({ publicKey: wallet.publicKey(), challenge, signature })).token);
}

/** An agent's balance through the operator's client on the service at `url`. */
const balanceOf = async (url: string, agentId: string) => (await op(url).balance(agentId)).balance;

function signed(xdr: string, wallet: Keypair): string {
  const tx = TransactionBuilder.fromXDR(xdr, STANDALONE_PASSPHRASE);
  tx.sign(wallet);
  return tx.toXDR();
}

test.before(async () => {
  // trees of 4 leaves (two transactions): the store recovered below is of a pool with several trees
  sandbox = await startPoolSandbox({ port: 0, ledgerMs: 250, treeCapacity: 4 });
  daemon = await startProverDaemon({
    listen: '127.0.0.1:0',
    circuitsDir: CIRCUITS_DIR,
    engine: 'native',
    witnessWorkers: 1,
  });
  await daemon.ready;
  const minted = await fetch(`${sandbox.url}/friendbot?addr=${sandbox.info.accounts.operator}&usdc=1000`);
  if (!minted.ok) throw new Error(await minted.text());
  const secrets = sandbox.secrets();
  env = {
    ...process.env,
    POOL_PROXY_PORT: String(await freePort()),
    POOL_PROXY_RPC_URL: sandbox.rpcUrl,
    POOL_PROXY_PROVER_ADDRESSES: daemon.address,
    POOL_PROXY_OPERATOR_SECRET: secrets.operator,
    POOL_PROXY_ASP_ADMIN_SECRET: secrets.admin,
    POOL_PROXY_INDEXER_POLL_MS: '100',
    POOL_PROXY_RATE_LIMIT_IP_PER_SECOND: '0',
  };
  delete env.POOL_PROXY_MASTER_KEY;
  delete env.POOL_PROXY_PUBLIC_URL;
  delete env.POOL_PROXY_DATA_DIR;
});

test.after.always(async () => {
  await daemon?.stop({ force: true });
  await sandbox?.close();
});

test.serial(
  'deposits, a flipped log byte, a refused start, store recover, and every balance is back',
  async (t) => {
    const first = await startService();
    t.teardown(() => void first.run.child.kill('SIGKILL'));
    for (const [agentId, amount] of [
      ['recover-a', '3'],
      ['recover-b', '2.5'],
      ['recover-c', '1'],
    ]) {
      const res = await op(first.url).operatorDeposit({ agentId, amount });
      t.is(res.status, 'confirmed', JSON.stringify(res));
    }
    t.is(await balanceOf(first.url, 'recover-a'), '3.0000000');
    t.is(await balanceOf(first.url, 'recover-b'), '2.5000000');
    t.is(await balanceOf(first.url, 'recover-c'), '1.0000000');
    t.like((await new PoolApi({ baseUrl: first.url }).info()).trees, { count: 2 }, 'notes in two trees');
    // Sessions (one logged out), and a wallet's deposit prepared and never submitted.
    const sessions = await openSessions(first.url);
    const wallet = Keypair.random();
    await fetch(`${sandbox.url}/friendbot?addr=${wallet.publicKey()}&usdc=5`);
    const walletClient = await login(first.url, wallet);
    const prepared = await walletClient.prepareDeposit({ amount: '1', publicKey: wallet.publicKey() });
    t.truthy(prepared.prepareId, JSON.stringify(prepared));

    // While it runs, a second process on the same store is told who holds it.
    const locked = await t.throwsAsync(EncryptedStore.open(storeDir, new Uint8Array(32)), {
      instanceOf: StoreLockedError,
    });
    t.regex(locked!.message, /is locked by another process/);
    // (on a port of its own: start checks its ports before it opens the store)
    const second = cli(['start', '--data-dir', dataDir], { POOL_PROXY_PORT: String(await freePort()) });
    t.is(await second.exited, 1);
    t.regex(
      second.output(),
      new RegExp(`store in ${storeDir} is locked by another process \\(pid ${first.run.child.pid}\\)`),
    );
    const busy = cli(['store', 'recover', '--data-dir', dataDir]);
    t.is(await busy.exited, 1);
    t.regex(busy.output(), new RegExp(`in use by process ${first.run.child.pid}: stop the service first`));
    await stop(first.run);

    // Every write of that run is still in the write-ahead log (LevelDB compacts it only on the next open).
    const log = readdirSync(storeDir).find((f) => f.endsWith('.log') && statSync(join(storeDir, f)).size > 0);
    t.truthy(log, 'a non-empty write-ahead log');
    const logFile = join(storeDir, log!);
    const bytes = readFileSync(logFile);
    bytes[bytes.length >> 1] ^= 0x40;
    writeFileSync(logFile, bytes);

    const damaged = cli(['start', '--data-dir', dataDir]);
    t.is(await damaged.exited, 1, damaged.output());
    t.regex(
      damaged.output(),
      new RegExp(`store in ${storeDir} is damaged: ${logFile} at byte \\d+: record checksum mismatch`),
    );
    t.regex(damaged.output(), new RegExp(`run: pool-proxy store recover --data-dir ${dataDir}`));
    t.deepEqual(readFileSync(logFile), bytes, 'the damaged file was left as it was');
    const check = cli(['store', 'check', '--data-dir', dataDir]);
    t.is(await check.exited, 1);
    t.regex(check.output(), /record checksum mismatch/);

    const recover = cli(['store', 'recover', '--data-dir', dataDir]);
    t.is(await recover.exited, 0, recover.output());
    t.regex(recover.output(), /damaged: .* record checksum mismatch/);
    const aside = readdirSync(dataDir).find((f) => f.startsWith('proxy-store.damaged-'));
    t.truthy(aside, recover.output());
    t.true(existsSync(join(dataDir, aside!, log!)), 'the damaged store is kept aside');
    const sound = cli(['store', 'check', '--data-dir', dataDir]);
    t.is(await sound.exited, 0, sound.output());

    const again = await startService();
    t.teardown(() => void again.run.child.kill('SIGKILL'));
    // What a recover keeps: agents, owners and balances (from the chain and the master key).
    t.is(await balanceOf(again.url, 'recover-a'), '3.0000000');
    t.is(await balanceOf(again.url, 'recover-b'), '2.5000000');
    t.is(await balanceOf(again.url, 'recover-c'), '1.0000000');
    // What it loses: every session (the logged-out token stays refused), the prepared deposit, the counts of
    // the public statistics (they restart; the agents are counted again from the chain).
    await checkSessionsEnded(t, again.url, sessions);
    const lost = await refused(
      t,
      (await login(again.url, wallet)).submitDeposit({
        prepareId: prepared.prepareId,
        signedTransactionXDR: signed(prepared.transactionXDR, wallet),
      }),
    );
    t.is(lost.status, 404, lost.detail);
    const stats = await new PoolApi({ baseUrl: again.url }).stats();
    t.like(stats, { activeAgents: 3, totalTransactions: 0, servicesUsed: 0, recentBatches: [] });
    // The rebuilt notes are spendable, in the first tree and in the second.
    const destination = sandbox.info.accounts.operator;
    for (const [agentId, amount] of [
      ['recover-b', '2.5'],
      ['recover-c', '1'],
    ] as const) {
      const spend = await op(again.url).withdraw({ agentId, amount, destination });
      t.is(spend.status, 'confirmed', JSON.stringify(spend));
      t.is(await balanceOf(again.url, agentId), '0.0000000');
    }
    await stop(again.run);
  },
);

test.serial('store recover refuses without the master key the store was made with', async (t) => {
  const empty = mkdtempSync(join(tmpdir(), 'pp-recover-nokey-'));
  const run = cli(['store', 'recover', '--data-dir', empty]);
  t.is(await run.exited, 1);
  t.regex(
    run.output(),
    /no master key: .*master\.key is missing .* can only be rebuilt with the key it was made with/s,
  );
  t.deepEqual(readdirSync(empty), [], 'no key file was created');
});

test.serial(
  'a store never meets a new key: a missing key file stops start and recover; a foreign key is refused',
  async (t) => {
    // The first test left a store with the deposits of two agents and its master.key in dataDir.
    const keyFile = join(dataDir, 'master.key');
    const asidesBefore = asides();
    const original = readFileSync(keyFile);
    renameSync(keyFile, `${keyFile}.bak`);
    t.teardown(() => {
      writeFileSync(keyFile, original, { mode: 0o600 });
      chmodSync(keyFile, 0o600);
    });
    const start = cli(['start', '--data-dir', dataDir]);
    t.is(await start.exited, 1, start.output());
    t.regex(
      start.output(),
      new RegExp(`master key file ${keyFile} is missing, but ${storeDir} holds a store`),
    );
    t.regex(start.output(), /Put the key file back from your backup/);
    t.false(existsSync(keyFile), 'no new key was created beside the store');
    const recover = cli(['store', 'recover', '--data-dir', dataDir]);
    t.is(await recover.exited, 1);
    t.regex(recover.output(), new RegExp(`${keyFile} is missing .* put the key file back`, 's'));
    t.false(existsSync(keyFile));

    // Another key in the file: start names it; recover checks it against the chain and refuses it.
    writeFileSync(keyFile, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600 });
    const wrongStart = cli(['start', '--data-dir', dataDir]);
    t.is(await wrongStart.exited, 1, wrongStart.output());
    t.regex(
      wrongStart.output(),
      new RegExp(`master key file ${keyFile} does not open the store in ${storeDir}`),
    );
    const wrongRecover = cli(['store', 'recover', '--data-dir', dataDir]);
    t.is(await wrongRecover.exited, 1, wrongRecover.output());
    t.regex(wrongRecover.output(), /opens none of the pool's \d+ notes/);
    t.is(asides(), asidesBefore, 'the store was not moved aside');

    // The right key again: recover accepts it (and says why).
    writeFileSync(keyFile, original, { mode: 0o600 });
    const right = cli(['store', 'recover', '--data-dir', dataDir]);
    t.is(await right.exited, 0, right.output());
    t.regex(right.output(), /the master key opens this proxy’s notes on chain/);
  },
);

function asides(): number {
  return readdirSync(dataDir).filter((f) => f.startsWith('proxy-store.damaged-')).length;
}

test.serial(
  "the RPC forgot the pool's first events: the proxy's event archive (exported and imported) rebuilds every balance",
  async (t) => {
    // The store made by the last recover is rebuilt by this start (from the archive, then the RPC).
    const first = await startService();
    t.teardown(() => void first.run.child.kill('SIGKILL'));
    t.is(await balanceOf(first.url, 'recover-a'), '3.0000000');
    const late = await op(first.url).operatorDeposit({ agentId: 'late-agent', amount: '1.5' });
    t.is(late.status, 'confirmed', JSON.stringify(late));
    const books = await op(first.url).books();
    await stop(first.run);

    // The RPC keeps 8 ledgers (2 s here) from now on: every pool event falls out of it.
    const server = new rpc.Server(sandbox.rpcUrl, { allowHttp: true });
    const landed = await server.getTransaction(late.txHash);
    const lastEvent = (landed as rpc.Api.GetSuccessfulTransactionResponse).ledger;
    sandbox.chain.state.retainLedgers(8);
    while ((await server.getHealth()).oldestLedger <= lastEvent) await new Promise((r) => setTimeout(r, 250));

    // The operator exports the archive, the data directory loses it, the export is imported again.
    const file = join(mkdtempSync(join(tmpdir(), 'pp-events-')), 'pool-events.jsonl');
    const exported = cli(['store', 'export-events', '--data-dir', dataDir, '--to', file]);
    t.is(await exported.exited, 0, exported.output());
    const count = Number(/exported (\d+) pool events/.exec(exported.output())?.[1]);
    t.true(count > 0, exported.output());
    renameSync(join(dataDir, 'pool-events'), join(dataDir, 'pool-events.lost'));
    const bad = join(dirname(file), 'bad.jsonl');
    writeFileSync(bad, '{"id":"x"}\n');
    const refused = cli(['store', 'import-events', '--data-dir', dataDir, '--from', bad]);
    t.is(await refused.exited, 1);
    t.regex(refused.output(), /line 1: not an archived pool event/);
    t.false(existsSync(join(dataDir, 'pool-events')), 'a bad export changes nothing');
    const imported = cli(['store', 'import-events', '--data-dir', dataDir, '--from', file]);
    t.is(await imported.exited, 0, imported.output());
    t.regex(imported.output(), new RegExp(`imported ${count} pool events`));

    // recover checks the key against the archive (the RPC has none of the pool's events any more)
    const recover = cli(['store', 'recover', '--data-dir', dataDir]);
    t.is(await recover.exited, 0, recover.output());
    t.regex(recover.output(), /the master key opens this proxy’s notes on chain/);
    const again = await startService();
    t.teardown(() => void again.run.child.kill('SIGKILL'));
    t.regex(again.run.output(), /pool events replayed from the archive/);
    t.is(await balanceOf(again.url, 'recover-a'), '3.0000000');
    t.is(await balanceOf(again.url, 'late-agent'), '1.5000000');
    const rebuilt = await op(again.url).books();
    t.is(rebuilt.agentNotes, books.agentNotes);
    const stroops = (v: string) => BigInt(v.replace('.', ''));
    t.is(
      stroops(rebuilt.agentNotes) + stroops(rebuilt.floatAccount),
      await usdcOf(sandbox, sandbox.info.contracts.pool),
      'books = chain: the pool contract holds the rebuilt notes',
    );
    await stop(again.run);
  },
);
