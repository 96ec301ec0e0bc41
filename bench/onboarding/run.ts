// Onboarding under attack, full size: for `minutes` (10) an attacker wallet keeps two prepared deposits
// outstanding and prepares them again as they expire, while `wallets` (50) wallets each create two new
// agents, starting at random times over the first `spread` minutes (5): prepare (retrying
// `503 registration_pending` after its Retry-After), a random 0–3 s to sign, submit (a stale answer means
// preparing again). Default registration settings (docs/OPERATIONS.md, "Registration slots"), 1 s ledgers.
// Prints p50/p95/max of prepare and submit latency (each request), of the onboarding (first request to
// confirmation) and of the time spent waiting for a slot, the stale rate, the longest request and the 503s,
// with the CPU, the load average and the commit (the machine may be shared).
// Usage: npx tsx bench/onboarding/run.ts [wallets=50] [spreadMinutes=5] [attackMinutes=10]
import { execFileSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Keypair, TransactionBuilder } from '#stellar-sdk';
import { benchProxyEnv, startBenchProver } from '../helpers/stack.ts';
import { loadConfig } from '../../src/proxy/config.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { silentLogger } from '../../src/proxy/util/logger.ts';
import { startPoolSandbox } from '../../src/deploy/sandbox-network.ts';

const wallets = Number(process.argv[2] ?? 50);
const spreadMs = Number(process.argv[3] ?? 5) * 60_000;
const attackMs = Number(process.argv[4] ?? 10) * 60_000;
const cpu = /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? 'unknown CPU';
const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const dataDir = mkdtempSync(join(tmpdir(), 'bench-onboarding-'));
const LEDGER_MS = 1000;
const sandbox = await startPoolSandbox({ port: 0, ledgerMs: LEDGER_MS });
const daemon = await startBenchProver();
const config = loadConfig({
  ...benchProxyEnv(sandbox, daemon, dataDir),
});
const proxy = await startProxy(config, { logger: silentLogger });
await proxy.ready;
const passphrase = sandbox.info.networkPassphrase;

interface Answer {
  status: number;
  json: Record<string, string>;
  retryAfter: number;
  ms: number;
}
const requests: Array<{ what: string; ms: number; status: number }> = [];
async function post(what: string, path: string, body: unknown, token: string): Promise<Answer> {
  const started = performance.now();
  const res = await fetch(`${proxy.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as Record<string, string>;
  const ms = performance.now() - started;
  requests.push({ what, ms, status: res.status });
  return { status: res.status, json, retryAfter: Number(res.headers.get('retry-after') ?? 1), ms };
}

async function login(kp: Keypair): Promise<string> {
  const { challenge } = (await (
    await fetch(`${proxy.url}/api/auth/challenge?publicKey=${kp.publicKey()}`)
  ).json()) as { challenge: string };
  const signature = Buffer.from(kp.signMessage(challenge)).toString('base64');
  const res = await fetch(`${proxy.url}/api/auth/verify`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ publicKey: kp.publicKey(), challenge, signature }),
  });
  return ((await res.json()) as { token: string }).token;
}

async function newWallet(): Promise<{ kp: Keypair; token: string }> {
  const kp = Keypair.random();
  const funded = await fetch(`${sandbox.url}/friendbot?addr=${kp.publicKey()}&usdc=10`);
  if (!funded.ok) throw new Error(`friendbot: ${funded.status} ${await funded.text()}`);
  return { kp, token: await login(kp) };
}

let submits = 0;
let stale = 0;
const failures = new Map<string, number>();
const onboardMs: number[] = [];
const waitedMs: number[] = [];

async function onboard(w: { kp: Keypair; token: string }, agentId: string): Promise<void> {
  const started = performance.now();
  let work = 0;
  for (;;) {
    const prepared = await post(
      'prepare',
      '/api/deposit/prepare',
      { amount: '1', publicKey: w.kp.publicKey(), agentId },
      w.token,
    );
    if (prepared.status === 503 && prepared.json.code === 'registration_pending') {
      await sleep(prepared.retryAfter * 1000);
      continue;
    }
    if (prepared.status !== 200) {
      if (!failures.has(`prepare ${prepared.status} ${prepared.json.code}`))
        console.log(`first prepare refusal: ${prepared.status} ${JSON.stringify(prepared.json)}`);
      failures.set(
        `prepare ${prepared.status} ${prepared.json.code}`,
        (failures.get(`prepare ${prepared.status} ${prepared.json.code}`) ?? 0) + 1,
      );
      return;
    }
    await sleep(randomInt(3000)); // a person signing
    const tx = TransactionBuilder.fromXDR(prepared.json.transactionXDR!, passphrase);
    tx.sign(w.kp);
    const submitted = await post(
      'submit',
      '/api/deposit/submit',
      { prepareId: prepared.json.prepareId, signedTransactionXDR: tx.toXDR() },
      w.token,
    );
    submits++;
    work = prepared.ms + submitted.ms;
    if (submitted.status === 200) break;
    if (submitted.json.code === 'prepare_stale') {
      stale++;
      continue;
    }
    failures.set(
      `submit ${submitted.status} ${submitted.json.code}`,
      (failures.get(`submit ${submitted.status} ${submitted.json.code}`) ?? 0) + 1,
    );
    return;
  }
  const total = performance.now() - started;
  onboardMs.push(total);
  waitedMs.push(total - work);
}

const started = Date.now();
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
console.log(`${cpu}, ${cpus().length} CPUs, load ${load()}; commit ${commit}; ${new Date().toISOString()}`);
console.log(
  `${wallets} wallets × 2 new agents over ${spreadMs / 60_000} min; an attacker re-preparing 2 deposits for ${attackMs / 60_000} min; ` +
    `slots ${config.registration.slotMs / 1000} s, window ${config.registration.windowMs / 1000} s, ${config.registration.perSlot} keys/slot, hold ${config.registration.holdMs / 1000} s`,
);

// The attacker: its own agent exists; two prepares outstanding at all times, renewed as they expire.
const attacker = await newWallet();
await onboard(attacker, 'attacker');
let attackerPrepares = 0;
const attack = async () => {
  while (Date.now() - started < attackMs) {
    const res = await post(
      'attacker prepare',
      '/api/deposit/prepare',
      { amount: '1', publicKey: attacker.kp.publicKey(), agentId: 'attacker' },
      attacker.token,
    );
    if (res.status === 200) {
      attackerPrepares++;
      await sleep(Math.max(0, Date.parse(res.json.expiresAt!) - Date.now()) + 50);
    } else await sleep(res.retryAfter * 1000);
  }
};
const attackers = [attack(), attack()];
const loads: number[] = [];
const sampler = setInterval(() => loads.push(loadavg()[0]!), 10_000);
await Promise.all(
  Array.from({ length: wallets }, async (_, i) => {
    await sleep(randomInt(spreadMs));
    const w = await newWallet();
    await onboard(w, `agent-${i}-a`);
    await onboard(w, `agent-${i}-b`);
  }),
);
await Promise.all(attackers);
clearInterval(sampler);

const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const q = (xs: number[], p: number) =>
  (sorted(xs)[Math.max(0, Math.ceil((p / 100) * xs.length) - 1)] ?? NaN) / 1000;
const row = (name: string, xs: number[]) =>
  `${name.padEnd(34)} n=${String(xs.length).padStart(4)}  p50 ${q(xs, 50).toFixed(1).padStart(6)} s  p95 ${q(xs, 95).toFixed(1).padStart(6)} s  max ${q(xs, 100).toFixed(1).padStart(6)} s`;
const of = (what: string, status?: number) =>
  requests.filter((r) => r.what === what && (status === undefined || r.status === status)).map((r) => r.ms);
console.log(row('prepare (every request)', of('prepare')));
console.log(row('prepare answered 200', of('prepare', 200)));
console.log(row('prepare answered 503 (Retry-After)', of('prepare', 503)));
console.log(row('submit', of('submit')));
console.log(row('onboarding (first request → confirmed)', onboardMs));
console.log(row('waiting for a slot (onboarding − work)', waitedMs));
// docs/OPERATIONS.md's bound on a key's wait: S + W + the inserts ahead of it in its slot (M ledgers), plus the
// bench's own 0–3 s of signing, which the wait above includes
const boundMs =
  config.registration.slotMs + config.registration.windowMs + config.registration.perSlot * LEDGER_MS + 3000;
console.log(
  `agents that waited longer than the bound (S + W + M ledgers + 3 s signing = ${boundMs / 1000} s): ` +
    `${waitedMs.filter((ms) => ms > boundMs).length} of ${waitedMs.length}`,
);
console.log(
  `agents confirmed ${onboardMs.length}/${wallets * 2}; submits ${submits}, stale ${stale} (${((100 * stale) / Math.max(1, submits)).toFixed(1)} %); ` +
    `attacker prepares ${attackerPrepares}; other failures: ${[...failures].map(([k, v]) => `${k} ×${v}`).join(', ') || 'none'}`,
);
console.log(
  `longest request ${(Math.max(...requests.map((r) => r.ms)) / 1000).toFixed(1)} s; load average during the run: ` +
    `min ${Math.min(...loads).toFixed(1)}, max ${Math.max(...loads).toFixed(1)}; total ${((Date.now() - started) / 60_000).toFixed(1)} min`,
);
await proxy.close();
await daemon.stop({ force: true });
await sandbox.close();
rmSync(dataDir, { recursive: true, force: true });
