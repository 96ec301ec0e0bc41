// Many wallets depositing at once, each to a new agent (so every deposit needs an allowlist registration):
// every wallet prepares, waits a random 0–3 s (a person signing), signs and submits. Counts how many deposits
// were confirmed, answered `409 prepare_stale` or refused otherwise, and times prepare and submit. Before the
// registrar held registrations back for outstanding prepared deposits, most of such a crowd failed stale.
// Usage: npx tsx bench/deposits/run.ts [wallets=24] [rounds=2]
import { randomInt } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Keypair, TransactionBuilder } from '#stellar-sdk';
import { benchProxyEnv, startBenchProver } from '../helpers/stack.ts';
import { loadConfig } from '../../src/proxy/config.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { silentLogger } from '../../src/proxy/util/logger.ts';
import { startPoolSandbox } from '../../src/deploy/sandbox-network.ts';
import { ledgerLogLines } from '../../src/sandbox/ledger-log.ts';

const wallets = Number(process.argv[2] ?? 24);
const rounds = Number(process.argv[3] ?? 2);
const cpu = /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? 'unknown CPU';

const dataDir = mkdtempSync(join(tmpdir(), 'bench-deposits-'));
const sandbox = await startPoolSandbox({
  port: 0,
  ledgerMs: 1000,
  // failed transactions are printed with the host's reason
  onLedgerClosed: (meta, txs) => {
    for (const line of ledgerLogLines(meta, txs))
      if (line.level !== 'info' && line.level !== 'debug')
        console.log(`  sandbox: ${line.message} ${JSON.stringify(line.fields)}`);
  },
});
const daemon = await startBenchProver();
const proxy = await startProxy(
  loadConfig({
    ...benchProxyEnv(sandbox, daemon, dataDir),
    POOL_PROXY_PREPARE_TTL_SECONDS: '60',
  }),
  { logger: silentLogger },
);
await proxy.ready;
const passphrase = sandbox.info.networkPassphrase;
const post = async (path: string, body: unknown, token?: string) => {
  const res = await fetch(`${proxy.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token && { authorization: `Bearer ${token}` }) },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as any };
};

async function login(kp: Keypair): Promise<string> {
  const { challenge } = (await (
    await fetch(`${proxy.url}/api/auth/challenge?publicKey=${kp.publicKey()}`)
  ).json()) as { challenge: string };
  const signature = Buffer.from(kp.signMessage(challenge)).toString('base64');
  return (await post('/api/auth/verify', { publicKey: kp.publicKey(), challenge, signature })).json.token;
}

console.log(
  `${cpu}, ${cpus().length} CPUs; ${wallets} wallets at once, each to a new agent, ${rounds} rounds`,
);
const outcomes = new Map<string, number>();
const details = new Map<string, string>();
const prepareMs: number[] = [];
const submitMs: number[] = [];
for (let round = 0; round < rounds; round++) {
  const people = await Promise.all(
    Array.from({ length: wallets }, async () => {
      const kp = Keypair.random();
      await fetch(`${sandbox.url}/friendbot?addr=${kp.publicKey()}&usdc=10`);
      return { kp, token: await login(kp) };
    }),
  );
  await Promise.all(
    people.map(async ({ kp, token }, i) => {
      let t = performance.now();
      const prepared = await post(
        '/api/deposit/prepare',
        { amount: '1', publicKey: kp.publicKey(), agentId: `crowd-${round}-${i}` },
        token,
      );
      prepareMs.push(performance.now() - t);
      let key: string;
      if (prepared.status !== 200) key = `prepare ${prepared.status} ${prepared.json.code}`;
      else {
        await new Promise((r) => setTimeout(r, randomInt(3000)));
        const tx = TransactionBuilder.fromXDR(prepared.json.transactionXDR, passphrase);
        tx.sign(kp);
        t = performance.now();
        const submitted = await post(
          '/api/deposit/submit',
          { prepareId: prepared.json.prepareId, signedTransactionXDR: tx.toXDR() },
          token,
        );
        submitMs.push(performance.now() - t);
        key = submitted.status === 200 ? 'confirmed' : `submit ${submitted.status} ${submitted.json.code}`;
        if (submitted.status !== 200 && !details.has(key)) details.set(key, submitted.json.detail);
      }
      outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
    }),
  );
}
const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const p = (xs: number[], q: number) => (sorted(xs)[Math.ceil((q / 100) * xs.length) - 1] ?? NaN) / 1000;
const total = wallets * rounds;
const stale = outcomes.get('submit 409 prepare_stale') ?? 0;
console.log(
  `deposits: ${total}; ${[...outcomes].map(([k, v]) => `${k} ×${v}`).join(', ')}; prepare_stale ${((100 * stale) / total).toFixed(1)} %`,
);
for (const [key, detail] of details) console.log(`  ${key}: ${detail}`);
console.log(
  `prepare p50 ${p(prepareMs, 50).toFixed(1)} s, p95 ${p(prepareMs, 95).toFixed(1)} s (includes waiting for registrations); ` +
    `submit p50 ${p(submitMs, 50).toFixed(1)} s`,
);
await proxy.close();
await daemon.stop({ force: true });
await sandbox.close();
rmSync(dataDir, { recursive: true, force: true });
