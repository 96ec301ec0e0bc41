// Sandbox USDC transfers per ledger close, many rounds, to compare versions of the engine in one process:
// this checkout and any other checkouts named on the command line (e.g. an older commit checked out with
// `git worktree add`, with node_modules and build/ copied in) each run one in-memory and one LevelDB-backed
// sandbox, all open side by side. The same funded senders each pay the next one 1 USDC every round
// (sequence numbers advance), and every round visits all sandboxes in a rotating order, so the swings of a
// shared machine hit every version alike (separate runs of the same code differ by up to 2x here). Each
// close is timed whole and split into applying the transactions and committing the batch
// (LedgerState.commit, LedgerStore.commit in older versions). Prints every round and the medians, as JSON on the last line for scripts.
// Usage: npx tsx bench/sandbox/transfers.ts [transfers=400] [rounds=10] [other-checkout …]
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Address, Contract, Keypair, nativeToScVal, rpc, TransactionBuilder } from '#stellar-sdk';
import { circuitArtifacts, POLICY_CIRCUIT } from '../../src/circuit/index.ts';
import { STANDALONE_PASSPHRASE } from '../../src/ledger/networks.ts';
import { fundMany } from './fund.ts';

const n = Number(process.argv[2] ?? 400);
const rounds = Number(process.argv[3] ?? 10);
const here = resolve(fileURLToPath(import.meta.url), '../../..');
const checkouts = [here, ...process.argv.slice(4).map((p) => resolve(p))];
const USDC = 10_000_000n;
const addr = (a: string) => new Address(a).toScVal();

/** What the bench uses of a running sandbox, in every version of the engine. */
interface RunningSandbox {
  url: string;
  rpcUrl: string;
  info: { contracts: { token: string } };
  /** `chain` with `state`; `ledger` with `store` in versions before the rename */
  chain?: Engine;
  ledger?: Engine;
  close(): Promise<void>;
}
interface Engine {
  stop(): Promise<void>;
  closeLedger(): Promise<void>;
  state?: Committer;
  store?: Committer;
}
interface Committer {
  commit(batch: unknown): Promise<void>;
}
function engineOf(sandbox: RunningSandbox): Engine {
  const engine = sandbox.chain ?? sandbox.ledger;
  if (engine === undefined) throw new Error('this sandbox version has neither chain nor ledger');
  return engine;
}
type Start = (opts: {
  port: number;
  ledgerMs: number;
  dataDir?: string;
  vkey: string;
}) => Promise<RunningSandbox>;

/** The pool sandbox's start function of a checkout: ../../src/deploy/sandbox-network.ts, or the engine before the split. */
async function starter(checkout: string): Promise<Start> {
  const network = join(checkout, '../../src/deploy/sandbox-network.ts');
  if (existsSync(network)) return (await import(network)).startPoolSandbox as Start;
  const { Sandbox } = await import(join(checkout, 'src/sandbox/index.ts'));
  return (opts) => Sandbox.start(opts);
}

interface Bench {
  name: string;
  sandbox: RunningSandbox;
  server: rpc.Server;
  senders: Keypair[];
  commitMs: number;
  closes: { ms: number; commitMs: number }[];
}

async function open(name: string, start: Start, dataDir?: string): Promise<Bench> {
  const vkey = circuitArtifacts(POLICY_CIRCUIT.id).vkey;
  const sandbox = await start({ port: 0, ledgerMs: 3_600_000, dataDir, vkey });
  await engineOf(sandbox).stop();
  const server = new rpc.Server(sandbox.rpcUrl, { allowHttp: true });
  const bench: Bench = { name, sandbox, server, senders: [], commitMs: 0, closes: [] };
  // time the state's commit inside each close
  const engine = engineOf(sandbox);
  const state = engine.state ?? engine.store;
  if (state === undefined) throw new Error('this sandbox version has no ledger state to time');
  const commit = state.commit.bind(state);
  state.commit = async (batch) => {
    const t0 = performance.now();
    await commit(batch);
    bench.commitMs += performance.now() - t0;
  };
  bench.senders = await fundMany(sandbox, () => engineOf(sandbox).closeLedger(), n, '100');
  return bench;
}

/** One round: every sender pays the next one; all queued, one close timed. */
async function round(b: Bench, record: boolean): Promise<void> {
  const { token } = b.sandbox.info.contracts;
  const txs = await Promise.all(
    b.senders.map(async (kp, i) => {
      const account = await b.server.getAccount(kp.publicKey());
      const to = (b.senders[(i + 1) % b.senders.length] as Keypair).publicKey();
      const raw = new TransactionBuilder(account, { fee: '100', networkPassphrase: STANDALONE_PASSPHRASE })
        .addOperation(
          new Contract(token).call(
            'transfer',
            addr(kp.publicKey()),
            addr(to),
            nativeToScVal(USDC, { type: 'i128' }),
          ),
        )
        .setTimeout(600)
        .build();
      const tx = await b.server.prepareTransaction(raw);
      tx.sign(kp);
      return tx;
    }),
  );
  const sent = await Promise.all(txs.map((tx) => b.server.sendTransaction(tx)));
  const refused = sent.filter((s) => s.status !== 'PENDING');
  if (refused.length) throw new Error(`${refused.length} not accepted: ${refused[0]?.status}`);
  b.commitMs = 0;
  const t0 = performance.now();
  await engineOf(b.sandbox).closeLedger();
  const ms = performance.now() - t0;
  const results = await Promise.all(sent.map((s) => b.server.getTransaction(s.hash)));
  const ok = results.filter((r) => r.status === rpc.Api.GetTransactionStatus.SUCCESS).length;
  if (ok !== txs.length) throw new Error(`${txs.length - ok} transactions failed`);
  if (record) b.closes.push({ ms, commitMs: b.commitMs });
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

const dir = mkdtempSync(join(tmpdir(), 'sandbox-transfers-'));
const benches: Bench[] = [];
try {
  for (const [i, checkout] of checkouts.entries()) {
    const start = await starter(checkout);
    const label = i === 0 ? 'this' : `other${i}`;
    console.log(`${label}: ${checkout}`);
    benches.push(
      await open(`${label}/memory`, start),
      await open(`${label}/leveldb`, start, join(dir, `${label}-db`)),
    );
  }
  for (const b of benches) await round(b, false); // warm-up (JIT), not reported
  for (let r = 0; r < rounds; r++) {
    const k = r % benches.length;
    for (const b of [...benches.slice(k), ...benches.slice(0, k)]) await round(b, true);
    const line = benches
      .map((b) => {
        const c = b.closes[b.closes.length - 1] as Bench['closes'][number];
        return `${b.name} ${c.ms.toFixed(0)} ms (commit ${c.commitMs.toFixed(0)})`;
      })
      .join('  ');
    console.log(`round ${r + 1}: ${line}`);
  }
  type Summary = { perSecond: number; closeMs: number; applyMs: number; commitMs: number };
  const summary: Record<string, Summary> = {};
  for (const b of benches) {
    const closeMs = median(b.closes.map((c) => c.ms));
    const commitMs = median(b.closes.map((c) => c.commitMs));
    const applyMs = median(b.closes.map((c) => c.ms - c.commitMs));
    summary[b.name] = { perSecond: Math.round((n * 1000) / closeMs), closeMs, applyMs, commitMs };
    console.log(
      `median ${b.name}: ${summary[b.name]!.perSecond}/s (close ${closeMs.toFixed(0)} ms = apply ${applyMs.toFixed(0)} + commit ${commitMs.toFixed(0)})`,
    );
  }
  // per-round ratios against this checkout, same store, same round: the comparison least hit by noise
  for (const other of benches.filter((b) => !b.name.startsWith('this/'))) {
    const mine = benches.find((b) => b.name === `this/${other.name.split('/')[1]}`) as Bench;
    const ratios = mine.closes.map((c, i) => (other.closes[i] as { ms: number }).ms / c.ms);
    console.log(
      `${other.name} close time / this: median ${median(ratios).toFixed(2)} (rounds: ${ratios.map((x) => x.toFixed(2)).join(' ')})`,
    );
  }
  console.log(JSON.stringify({ transfers: n, rounds, ...summary }));
} finally {
  for (const b of benches) await b.sandbox.close();
  rmSync(dir, { recursive: true, force: true });
}
