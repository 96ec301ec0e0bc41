// REST API figures on the sandbox, side by side in one run:
//   deposit prepare — end-to-end latency p50/p95 of POST /api/deposit/prepare (proof + simulation) next to
//                     the proof alone inside it (the proxy's own proof-duration histogram): ratio = total / proof
//   balance reads   — GET /api/balance/:agentId (JWT check + encrypted store read) next to GET /health on the
//                     same server (the bare HTTP pipeline): reads per second and ratio
// The proxy runs in its own process, so the load generator here does not share its event loop.
// Usage: npx tsx bench/api/run.ts [prepares=20] [rounds=5] [connections=32]  (rounds of 1 s per endpoint, interleaved)
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Keypair, TransactionBuilder } from '#stellar-sdk';
import { callJson } from '../helpers/http.ts';
import { benchOperator, benchProxyEnv, startBenchProver } from '../helpers/stack.ts';
import { startPoolSandbox } from '../../src/deploy/sandbox-network.ts';

const nPrepares = Number(process.argv[2] ?? 20);
const seconds = Number(process.argv[3] ?? 5);
const connections = Number(process.argv[4] ?? 32);

const agent = new Agent({ keepAlive: true, maxSockets: connections });

const call = (url: string, method = 'GET', body?: unknown, headers: Record<string, string> = {}) =>
  callJson(url, { method, body, agent, headers });

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

function histogramSum(metrics: string, name: string): { sum: number; count: number } {
  const sum = Number(new RegExp(`^${name}_sum (\\S+)$`, 'm').exec(metrics)?.[1] ?? 0);
  const count = Number(new RegExp(`^${name}_count (\\S+)$`, 'm').exec(metrics)?.[1] ?? 0);
  return { sum, count };
}

/** Requests per second of `url` over `seconds` with `connections` concurrent keep-alive clients. */
async function throughput(
  url: string,
  headers: Record<string, string>,
  durationSeconds: number,
): Promise<{ perSecond: number; errors: number }> {
  const end = Date.now() + durationSeconds * 1000;
  let done = 0;
  let errors = 0;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (Date.now() < end) {
        const res = await call(url, 'GET', undefined, headers);
        if (res.status === 200) done++;
        else errors++;
      }
    }),
  );
  return { perSecond: done / durationSeconds, errors };
}

const dataDir = mkdtempSync(join(tmpdir(), 'pp-bench-api-'));
const sandbox = await startPoolSandbox({ port: 0, ledgerMs: 250 });
const daemon = await startBenchProver();
const proxyEnv = benchProxyEnv(sandbox, daemon, dataDir);
const operator = benchOperator(proxyEnv);
const child = spawn(
  process.execPath,
  ['--import=tsx', fileURLToPath(new URL('./proxy-process.ts', import.meta.url))],
  {
    env: {
      ...process.env,
      ...proxyEnv,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  },
);
const api = await new Promise<string>((resolve, reject) => {
  createInterface({ input: child.stdout! }).once('line', (line) => resolve(JSON.parse(line).url));
  child.once('exit', (code) => reject(new Error(`proxy exited with ${code}`)));
});

try {
  const wallet = Keypair.random();
  const funded = await fetch(`${sandbox.url}/friendbot?addr=${wallet.publicKey()}&usdc=1000`);
  if (!funded.ok) throw new Error(await funded.text());
  const { json: challenge } = await call(`${api}/api/auth/challenge?publicKey=${wallet.publicKey()}`);
  const signature = Buffer.from(wallet.signMessage(challenge.challenge)).toString('base64');
  const { json: login } = await call(`${api}/api/auth/verify`, 'POST', {
    publicKey: wallet.publicKey(),
    challenge: challenge.challenge,
    signature,
  });
  const auth = { authorization: `Bearer ${login.token}` };

  // Warm-up: the first deposit also registers the agent in the ASP allowlist (one extra ledger round trip);
  // it is signed and submitted, so the agent whose balance is read below exists (an agent exists from its
  // first confirmed note).
  const warm = await call(
    `${api}/api/deposit/prepare`,
    'POST',
    { amount: '1', publicKey: wallet.publicKey() },
    auth,
  );
  if (warm.status !== 200) throw new Error(`prepare failed: ${warm.text}`);
  const tx = TransactionBuilder.fromXDR(warm.json.transactionXDR, sandbox.info.networkPassphrase);
  tx.sign(wallet);
  const submitted = await call(
    `${api}/api/deposit/submit`,
    'POST',
    { prepareId: warm.json.prepareId, signedTransactionXDR: tx.toXDR() },
    auth,
  );
  if (submitted.status !== 200) throw new Error(`submit failed: ${submitted.text}`);

  const before = histogramSum(
    (await call(`${api}/metrics`, 'GET', undefined, operator)).text,
    'pool_proxy_proof_duration_seconds',
  );
  const latencies: number[] = [];
  for (let i = 0; i < nPrepares; i++) {
    const started = performance.now();
    const res = await call(
      `${api}/api/deposit/prepare`,
      'POST',
      { amount: '1.5', publicKey: wallet.publicKey() },
      auth,
    );
    latencies.push(performance.now() - started);
    if (res.status !== 200) throw new Error(`prepare failed: ${res.text}`);
  }
  const after = histogramSum(
    (await call(`${api}/metrics`, 'GET', undefined, operator)).text,
    'pool_proxy_proof_duration_seconds',
  );
  const proofMs = ((after.sum - before.sum) / (after.count - before.count)) * 1000;
  latencies.sort((a, b) => a - b);
  const p50 = percentile(latencies, 50);
  const p95 = percentile(latencies, 95);

  // Interleaved one-second rounds, so both endpoints see the same background load.
  const health = { perSecond: 0, errors: 0 };
  const balance = { perSecond: 0, errors: 0 };
  for (let round = 0; round < seconds; round++) {
    const h = await throughput(`${api}/health`, {}, 1);
    const b = await throughput(`${api}/api/balance/${wallet.publicKey()}`, auth, 1);
    health.perSecond += h.perSecond / seconds;
    health.errors += h.errors;
    balance.perSecond += b.perSecond / seconds;
    balance.errors += b.errors;
  }

  console.log(
    `deposit prepare (n=${nPrepares}): p50 ${p50.toFixed(0)} ms, p95 ${p95.toFixed(0)} ms, mean proof inside ${proofMs.toFixed(0)} ms, p50/proof = ${(p50 / proofMs).toFixed(2)}`,
  );
  console.log(`GET /health:         ${health.perSecond.toFixed(0)} req/s (${health.errors} errors)`);
  console.log(
    `GET /api/balance/:id: ${balance.perSecond.toFixed(0)} req/s (${balance.errors} errors), balance/health = ${(balance.perSecond / health.perSecond).toFixed(2)}`,
  );
  console.log(
    `(${connections} keep-alive connections, ${seconds} interleaved 1 s rounds each, proxy in its own process)`,
  );
} finally {
  child.kill('SIGKILL');
  agent.destroy();
  await daemon.stop({ force: true });
  await sandbox.close();
  rmSync(dataDir, { recursive: true, force: true });
}
