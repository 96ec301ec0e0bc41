// Replicas side by side in one run: 1 proxy on LevelDB, 1 proxy on PostgreSQL, 3 proxies on one PostgreSQL
// (each proxy in its own process, requests spread round-robin):
//   balance reads — GET /api/balance/:agentId (operator, loopback) with `connections` keep-alive clients for
//                   `seconds`: reads per second, and CPU per read (the proxies' processes plus the PostgreSQL
//                   server's, from /proc)
//   payments      — a burst of `burst` payments of the demo x402 service sent at once (they fall in one batch
//                   window; on replicas, the batch of the elected batch leader, fed by every replica through
//                   the database's queue): how long until every answer, and CPU per payment in the proxies and
//                   the database (the sandbox, facilitator and demo service run here, on threads, not counted)
// PostgreSQL comes from Debian's package, started as the tests start it (test/helpers/postgres.ts).
// Usage: npx tsx bench/replicas/run.ts [seconds=5] [connections=32] [burst=150]
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { callJson } from '../helpers/http.ts';
import { benchOperator, benchProxyEnv, CIRCUITS_DIR, startBenchProver } from '../helpers/stack.ts';
import { startPoolSandboxThread } from '../../src/cli/threads/sandbox-thread.ts';
import { startLocalX402Thread } from '../../src/cli/threads/x402-thread.ts';
import { localX402Env } from '../../src/x402/local-services.ts';
import { STANDALONE_PASSPHRASE } from '../../src/ledger/networks.ts';
import { circuitArtifacts, POLICY_CIRCUIT } from '../../src/circuit/policy-circuit.ts';
import { startPostgres } from '../../test/helpers/postgres.ts';

const seconds = Number(process.argv[2] ?? 5);
const connections = Number(process.argv[3] ?? 32);
const burst = Number(process.argv[4] ?? 150);
const TICK = 100; // clock ticks per second (/proc/<pid>/stat)
/** The operator's token (benchProxyEnv's), shared by every replica. */
let operator: Record<string, string> = {};

const agent = new Agent({ keepAlive: true, maxSockets: connections * 3 });

const call = (url: string, method = 'GET', body?: unknown) =>
  callJson(url, { method, body, agent, headers: operator });

/** CPU seconds used so far by `pid` and, with `children`, the processes whose parent it is. */
function cpuSeconds(pid: number, children = false): number {
  const of = (p: number) => {
    try {
      const fields = readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1]!.split(' ');
      return (Number(fields[11]) + Number(fields[12])) / TICK;
    } catch {
      return 0;
    }
  };
  let total = of(pid);
  if (children) {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const fields = readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]!.split(' ');
        if (Number(fields[1]) === pid) total += of(Number(entry));
      } catch {
        // gone meanwhile
      }
    }
  }
  return total;
}

const sandbox = await startPoolSandboxThread({
  host: '127.0.0.1',
  port: 0,
  ledgerMs: 1000,
  dataDir: mkdtempSync(join(tmpdir(), 'pp-bench-replicas-sandbox-')),
  vkey: circuitArtifacts(POLICY_CIRCUIT.id, CIRCUITS_DIR).vkey,
  networkPassphrase: STANDALONE_PASSPHRASE,
});
const daemon = await startBenchProver();
for (const [addr, usdc] of [
  [sandbox.info.accounts.operator, 100_000],
  [sandbox.info.accounts.poolWallet, 10_000],
] as const) {
  const res = await fetch(`${sandbox.url}/friendbot?addr=${addr}&usdc=${usdc}`);
  if (!res.ok) throw new Error(await res.text());
}
const x402 = await startLocalX402Thread({
  rpcUrl: sandbox.rpcUrl,
  networkPassphrase: STANDALONE_PASSPHRASE,
  asset: sandbox.info.contracts.token,
  facilitator: { host: '127.0.0.1', port: 0 },
  demo: { host: '127.0.0.1', port: 0 },
});
const pg = await startPostgres();
const postmaster = Number(readFileSync(join(pg.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);

async function startReplicas(
  count: number,
  databaseUrl: string,
): Promise<{ urls: string[]; children: ChildProcess[] }> {
  const env = {
    ...process.env,
    ...localX402Env(x402, undefined),
    ...benchProxyEnv(sandbox, daemon),
    POOL_PROXY_SANDBOX_INFO_URL: `${sandbox.url}/sandbox/info`,
    POOL_PROXY_POOL_WALLET_SECRET: sandbox.secrets().poolWallet,
    POOL_PROXY_BATCH_WINDOW_MS: '3000',
    POOL_PROXY_SETTLE_INTERVAL_MS: '86400000',
    POOL_PROXY_PUBLIC_URL: 'http://pool.bench',
    POOL_PROXY_DATABASE_URL: databaseUrl,
  };
  operator = benchOperator(env);
  const dataDir = mkdtempSync(join(tmpdir(), 'pp-bench-replicas-'));
  const children: ChildProcess[] = [];
  const urls = await Promise.all(
    Array.from({ length: count }, (_, i) => {
      const child = spawn(
        process.execPath,
        ['--import=tsx', fileURLToPath(new URL('../api/proxy-process.ts', import.meta.url))],
        {
          env: { ...env, POOL_PROXY_DATA_DIR: join(dataDir, String(i)) },
          stdio: ['ignore', 'pipe', 'inherit'],
        },
      );
      children.push(child);
      return new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout! }).once('line', (line) => resolve(JSON.parse(line).url));
        child.once('exit', (code) => reject(new Error(`proxy exited with ${code}`)));
      });
    }),
  );
  return { urls, children };
}

interface Row {
  setup: string;
  reads: number;
  readCpuMs: number;
  burstSeconds: number;
  paid: number;
  payCpuMs: number;
}

async function measure(setup: string, count: number, databaseUrl: string): Promise<Row> {
  const { urls, children } = await startReplicas(count, databaseUrl);
  const cpu = () =>
    children.reduce((s, c) => s + cpuSeconds(c.pid!), 0) +
    (databaseUrl === '' ? 0 : cpuSeconds(postmaster, true));
  try {
    const agentId = `bench-${count}-${databaseUrl === '' ? 'level' : 'pg'}`;
    const dep = await call(`${urls[0]}/api/deposit`, 'POST', { agentId, amount: '10' });
    if (dep.status !== 200) throw new Error(`deposit: ${JSON.stringify(dep.json)}`);
    // balance reads
    let reads = 0;
    let errors = 0;
    const cpu0 = cpu();
    const end = Date.now() + seconds * 1000;
    let next = 0;
    await Promise.all(
      Array.from({ length: connections }, async () => {
        while (Date.now() < end) {
          const res = await call(`${urls[next++ % urls.length]}/api/balance/${agentId}`);
          if (res.status === 200) reads++;
          else errors++;
        }
      }),
    );
    const readCpu = cpu() - cpu0;
    if (errors > 0) console.warn(`${setup}: ${errors} balance reads failed`);
    // one burst of payments
    const cpu1 = cpu();
    const started = performance.now();
    const answers = await Promise.all(
      Array.from({ length: burst }, (_, i) =>
        call(`${urls[i % urls.length]}/api/pay`, 'POST', {
          agentId,
          serviceUrl: x402.demo.quoteUrl,
          method: 'GET',
        }),
      ),
    );
    const burstSeconds = (performance.now() - started) / 1000;
    const payCpu = cpu() - cpu1;
    const paid = answers.filter((a) => a.status === 200 && a.json?.paymentStatus === 'confirmed').length;
    return {
      setup,
      reads: reads / seconds,
      readCpuMs: (readCpu / Math.max(1, reads)) * 1000,
      burstSeconds,
      paid,
      payCpuMs: (payCpu / Math.max(1, paid)) * 1000,
    };
  } finally {
    for (const c of children) c.kill('SIGKILL');
  }
}

try {
  const rows = [
    await measure('1 proxy, LevelDB', 1, ''),
    await measure('1 proxy, PostgreSQL', 1, await pg.database()),
    await measure('3 proxies, one PostgreSQL', 3, await pg.database()),
  ];
  const base = rows[0]!;
  console.log(
    `load average at the end: ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`,
  );
  console.log(
    '| setup | balance reads/s | CPU per read | burst of payments: paid, seconds to the last answer | CPU per payment (proxies + database) | reads vs 1 proxy on LevelDB |',
  );
  for (const r of rows)
    console.log(
      `| ${r.setup} | ${r.reads.toFixed(0)} | ${r.readCpuMs.toFixed(2)} ms | ${r.paid}/${burst} in ${r.burstSeconds.toFixed(1)} s | ${r.payCpuMs.toFixed(1)} ms | ${(r.reads / base.reads).toFixed(2)} |`,
    );
  console.log(
    `(${connections} keep-alive clients for ${seconds} s; ${burst} payments sent at once; 3 s batch window)`,
  );
} finally {
  agent.destroy();
  await x402.close();
  await daemon.stop({ force: true });
  await sandbox.close();
  await pg.stop();
}
