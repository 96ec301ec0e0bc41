// A damaged proxy store fails loudly and comes back: the real `pool-proxy start` (proxy only, against a
// sandbox ledger and prover daemon run by this test) takes deposits for two agents and stops; one byte of
// its store's write-ahead log is flipped; the next start refuses, naming the file and the recovery
// command; `pool-proxy store recover` moves the store aside; the start after it replays the chain and
// every balance is back. A second process on a store in use is told which process holds it. Last, the ledger's
// RPC is given a retention window and the pool's first events fall out of it: the proxy's own archive of the
// pool's events (exported, set aside and imported again, as an operator moving a deployment would) rebuilds
// every balance, books = chain. Then the thief's and the careless operator's archives: an export edited (a
// withdrawal's nullifier replaced, a ciphertext byte flipped, a forged commitment, an edited MAC, another
// contract's event, an archived event sealed again with other content) is refused at import with nothing
// written, books = chain; an archive sealed under the right key but unlike the chain makes the rebuilt store's
// start refuse, naming the first mismatch; and without the archive, recover names the ledgers it lacks and a
// new store's start refuses, never ready. Every request is well-formed and goes through PoolApi.
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
  rmSync,
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
import { Keypair, nativeToScVal, rpc, scValToNative, TransactionBuilder, xdr } from '#stellar-sdk';
import { ArchiveSeal } from '../../src/proxy/services/archive-seal.ts';
import { LevelEventArchive, type SealedEvent } from '../../src/proxy/services/event-archive.ts';
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
    // (the archive's seals are the first to refuse it: they verify only under this deployment's key)
    t.regex(
      wrongRecover.output(),
      /does not verify the seal of the event archive's pool event \S+: either it is not the master key/,
    );
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

/** The data directory's master key (the archive is sealed under it). */
const masterKey = () => Buffer.from(readFileSync(join(dataDir, 'master.key'), 'utf8').trim(), 'hex');

/** The events of an export, one a line. */
const linesOf = (file: string): SealedEvent[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as SealedEvent);

const writeLines = (file: string, events: readonly SealedEvent[]) =>
  writeFileSync(file, events.map((e) => `${JSON.stringify(e)}\n`).join(''));

/** The name of an event (its first topic). */
const nameOf = (e: SealedEvent) => scValToNative(xdr.ScVal.fromXDR(e.topic[0]!, 'base64')) as string;
const u256 = (n: bigint) => nativeToScVal(n, { type: 'u256' }).toXDR('base64');
const randomField = () => BigInt(`0x${randomBytes(31).toString('hex')}`);

/** `e` with one byte of its note's ciphertext flipped (in place in the value's XDR). */
function flipCiphertext(e: SealedEvent): SealedEvent {
  const raw = Buffer.from(e.value, 'base64');
  const { encrypted_output } = scValToNative(xdr.ScVal.fromXDR(raw)) as { encrypted_output: Uint8Array };
  const at = raw.indexOf(Buffer.from(encrypted_output));
  raw[at + 10]! ^= 0x01;
  return { ...e, value: raw.toString('base64') };
}

/** `all` with event `i` replaced by `e`. */
const replaced = (all: readonly SealedEvent[], i: number, e: SealedEvent) =>
  all.map((x, j) => (j === i ? e : x));
/** `all` with `e` inserted at `i`. */
const inserted = (all: readonly SealedEvent[], i: number, e: SealedEvent) => [
  ...all.slice(0, i),
  e,
  ...all.slice(i),
];
/** Index of the last event of `all` that `match` accepts (-1: none). */
function lastIndexWhere(all: readonly SealedEvent[], match: (e: SealedEvent) => boolean): number {
  for (let i = all.length - 1; i >= 0; i--) if (match(all[i]!)) return i;
  return -1;
}

/** `e` as the next event of its ledger (its id's event number + 1). */
function nextId(e: SealedEvent): string {
  const [prefix, n] = e.id.split('-') as [string, string];
  return `${prefix}-${String(Number(n) + 1).padStart(10, '0')}`;
}

/** A fresh export of the data directory's archive (bytes). */
async function exportNow(t: import('ava').ExecutionContext): Promise<{ file: string; bytes: Buffer }> {
  const file = join(mkdtempSync(join(tmpdir(), 'pp-events-')), 'pool-events.jsonl');
  const run = cli(['store', 'export-events', '--data-dir', dataDir, '--to', file]);
  t.is(await run.exited, 0, run.output());
  return { file, bytes: readFileSync(file) };
}

/** Books = chain: the rebuilt notes and the float account are what the pool contract holds. */
async function booksEqualChain(t: import('ava').ExecutionContext, url: string): Promise<void> {
  const books = await op(url).books();
  const stroops = (v: string) => BigInt(v.replace('.', ''));
  t.is(
    stroops(books.agentNotes) + stroops(books.floatAccount),
    await usdcOf(sandbox, sandbox.info.contracts.pool),
    'books = chain',
  );
}

test.serial(
  'an edited export is refused line by line: nothing is written, the books still equal the chain',
  async (t) => {
    const { file, bytes } = await exportNow(t);
    const events = linesOf(file);
    const pool = sandbox.info.contracts.pool;
    const seal = new ArchiveSeal(masterKey());
    const nullifierAt = events.findIndex((e) => e.contractId === pool && nameOf(e) === 'new_nullifier_event');
    const depositAt = events.findIndex((e) => e.contractId === pool && nameOf(e) === 'new_commitment_event');
    const lastCommitmentAt = lastIndexWhere(
      events,
      (e) => e.contractId === pool && nameOf(e) === 'new_commitment_event',
    );
    t.true(nullifierAt >= 0 && depositAt >= 0, 'the archive holds a withdrawal and a deposit');
    const withNullifier = (e: SealedEvent) => ({ ...e, topic: [e.topic[0]!, u256(randomField())] });
    const last = events[lastCommitmentAt]!;
    const forged: SealedEvent = { ...last, id: nextId(last), topic: [last.topic[0]!, u256(randomField())] };
    const resealed = (e: SealedEvent): SealedEvent => ({ ...e, mac: seal.mac(e) });
    const attacks: Array<{ name: string; edit: (all: SealedEvent[]) => SealedEvent[]; refusal: RegExp }> = [
      {
        name: "a withdrawal's nullifier replaced",
        edit: (all) => replaced(all, nullifierAt, withNullifier(all[nullifierAt]!)),
        refusal: new RegExp(`line ${nullifierAt + 1}: the seal of pool event \\S+ does not verify`),
      },
      {
        name: "a byte of a deposit's ciphertext flipped",
        edit: (all) => replaced(all, depositAt, flipCiphertext(all[depositAt]!)),
        refusal: new RegExp(`line ${depositAt + 1}: the seal of pool event \\S+ does not verify`),
      },
      {
        name: 'a forged commitment inserted',
        edit: (all) => inserted(all, lastCommitmentAt + 1, forged),
        refusal: new RegExp(
          `line ${lastCommitmentAt + 2}: the seal of pool event ${forged.id} does not verify`,
        ),
      },
      {
        name: 'an edited MAC',
        edit: (all) =>
          replaced(all, 0, { ...all[0]!, mac: all[0]!.mac.replace(/^./, (c) => (c === 'a' ? 'b' : 'a')) }),
        refusal: /line 1: the seal of pool event \S+ does not verify/,
      },
      {
        name: 'an event of another contract',
        edit: (all) => replaced(all, 0, { ...all[0]!, contractId: sandbox.info.contracts.token }),
        refusal: /line 1: the seal of pool event \S+ does not verify/,
      },
      {
        // sealed under this master key: another deployment's export
        name: "another deployment's event (sealed under this master key)",
        edit: (all) => replaced(all, 0, resealed({ ...all[0]!, contractId: sandbox.info.contracts.token })),
        refusal: new RegExp(
          `line 1: pool event \\S+ is of contract ${sandbox.info.contracts.token}, not of this deployment's pool`,
        ),
      },
      {
        // sealed under this master key: only the archive's refusal to replace an event stops it
        name: "an archived withdrawal's nullifier replaced and sealed again",
        edit: (all) => replaced(all, nullifierAt, resealed(withNullifier(all[nullifierAt]!))),
        refusal: new RegExp(
          `pool event ${events[nullifierAt]!.id} is in the archive already with other content`,
        ),
      },
    ];
    for (const { name, edit, refusal } of attacks) {
      const edited = join(dirname(file), 'edited.jsonl');
      writeLines(edited, edit(events));
      const run = cli(['store', 'import-events', '--data-dir', dataDir, '--from', edited]);
      t.is(await run.exited, 1, `${name}: ${run.output()}`);
      t.regex(run.output(), refusal, name);
      t.regex(run.output(), /nothing was written/, name);
    }
    t.deepEqual((await exportNow(t)).bytes, bytes, 'the archive is as it was');

    // Nothing moved: the store rebuilt from the archive serves the chain's balances.
    t.is(await await cli(['store', 'recover', '--data-dir', dataDir]).exited, 0);
    const again = await startService();
    t.teardown(() => void again.run.child.kill('SIGKILL'));
    t.is(await balanceOf(again.url, 'recover-a'), '3.0000000');
    t.is(await balanceOf(again.url, 'recover-b'), '0.0000000', 'the withdrawal stays spent');
    t.is(await balanceOf(again.url, 'late-agent'), '1.5000000');
    await booksEqualChain(t, again.url);
    await stop(again.run);
  },
);

/** Replaces the data directory's archive by `events`, sealed under its master key; returns how to put it back. */
async function sealedArchiveOf(events: readonly SealedEvent[]): Promise<() => void> {
  const dir = join(dataDir, 'pool-events');
  const aside = join(dataDir, 'pool-events.kept');
  renameSync(dir, aside);
  const archive = await LevelEventArchive.open(dir, new ArchiveSeal(masterKey()));
  await archive.append(events);
  await archive.close();
  return () => {
    rmSync(dir, { recursive: true });
    renameSync(aside, dir);
  };
}

test.serial(
  'an archive sealed under this key but unlike the chain: the rebuilt store is refused, naming the first mismatch',
  async (t) => {
    const { file } = await exportNow(t);
    const events = linesOf(file);
    const pool = sandbox.info.contracts.pool;
    const nullifierAt = events.findIndex((e) => e.contractId === pool && nameOf(e) === 'new_nullifier_event');
    const lastCommitmentAt = lastIndexWhere(
      events,
      (e) => e.contractId === pool && nameOf(e) === 'new_commitment_event',
    );
    const nullifier = randomField();
    const last = events[lastCommitmentAt]!;
    const lastValue = scValToNative(xdr.ScVal.fromXDR(last.value, 'base64')) as {
      encrypted_output: Uint8Array;
      index: number;
      tree?: number;
    };
    // The pool's trees take 4 leaves here: the forged commitment goes after the last, in its tree or the next.
    const lastTree = Number(lastValue.tree ?? 0);
    const chainLeaves = Number(lastValue.index) + 1;
    const opens = chainLeaves === 4;
    const forgedValue = nativeToScVal(
      {
        encrypted_output: lastValue.encrypted_output,
        index: opens ? 0 : chainLeaves,
        tree: opens ? lastTree + 1 : lastTree,
      },
      { type: { encrypted_output: ['symbol', 'bytes'], index: ['symbol', 'u32'], tree: ['symbol', 'u32'] } },
    ).toXDR('base64');
    const forged = {
      ...last,
      id: nextId(last),
      topic: [last.topic[0]!, u256(randomField())],
      value: forgedValue,
    };
    const cases = [
      {
        name: "a withdrawal's nullifier replaced",
        events: replaced(events, nullifierAt, {
          ...events[nullifierAt]!,
          topic: [events[nullifierAt]!.topic[0]!, u256(nullifier)],
        }),
        refusal: new RegExp(
          `nullifier 0x${nullifier.toString(16).padStart(64, '0')} is spent in the events read but not in the pool contract`,
        ),
      },
      {
        name: 'a forged commitment inserted',
        events: inserted(events, lastCommitmentAt + 1, forged),
        refusal: opens
          ? new RegExp(`the events read fill ${lastTree + 2} pool trees, the pool contract ${lastTree + 1}`)
          : new RegExp(`holds ${chainLeaves + 1} leaves, the pool contract's ${chainLeaves}`),
      },
    ];
    for (const { name, events: edited, refusal } of cases) {
      const putBack = await sealedArchiveOf(edited);
      try {
        const recover = cli(['store', 'recover', '--data-dir', dataDir]);
        t.is(await recover.exited, 0, `${name}: ${recover.output()}`);
        const start = cli(['start', '--data-dir', dataDir]);
        t.is(await start.exited, 1, `${name}: ${start.output()}`);
        t.regex(start.output(), /differs from the chain/, name);
        t.regex(start.output(), refusal, name);
        t.notRegex(start.output(), /ready\./, `${name}: never ready`);
      } finally {
        putBack();
      }
    }
    // The true archive again: recover, and the books equal the chain.
    t.is(await await cli(['store', 'recover', '--data-dir', dataDir]).exited, 0);
    const again = await startService();
    t.teardown(() => void again.run.child.kill('SIGKILL'));
    t.is(await balanceOf(again.url, 'recover-b'), '0.0000000');
    await booksEqualChain(t, again.url);
    await stop(again.run);
  },
);

test.serial(
  'recover on a short-memory RPC without the archive refuses, naming the missing ledgers; a fresh store never gets ready',
  async (t) => {
    const dir = join(dataDir, 'pool-events');
    renameSync(dir, `${dir}.away`);
    t.teardown(() => {
      rmSync(dir, { recursive: true, force: true });
      renameSync(`${dir}.away`, dir);
    });
    const before = asides();
    const recover = cli(['store', 'recover', '--data-dir', dataDir]);
    t.is(await recover.exited, 1, recover.output());
    t.regex(
      recover.output(),
      /the pool holds (\d+) commitments but the events read give 0: its leaves 0–\d+ are in ledgers from the pool’s first ledger to \d+, which neither the event archive \(it holds none of them\) nor the RPC \(it keeps ledger \d+ on\) holds/,
    );
    t.regex(recover.output(), /pool-proxy store import-events/);
    t.notRegex(recover.output(), /opens none of the pool's/, 'not blamed on the master key');
    t.is(asides(), before, 'the store was not moved aside');

    // A store made without recover (a new data directory on the same ledger): start refuses, never ready.
    renameSync(storeDir, `${storeDir}.away`);
    t.teardown(() => {
      rmSync(storeDir, { recursive: true, force: true });
      renameSync(`${storeDir}.away`, storeDir);
    });
    const start = cli(['start', '--data-dir', dataDir]);
    t.is(await start.exited, 1, start.output());
    t.regex(
      start.output(),
      // (the pool's trees of 4 leaves have rolled over: the contract is past its first tree)
      /differs from the chain: (the events read fill 1 pool trees, the pool contract \d+|the pool tree rebuilt from the events read holds 0 leaves, the pool contract's \d+)/,
    );
    t.notRegex(start.output(), /ready\./);
  },
);
