// `pool-proxy demo [--proxy URL | --start] [--json FILE]`: against a running proxy on the sandbox (or one it
// starts), two wallets
// (friendbot) log in, deposit into one agent each, pay the demo x402 service when the proxy has
// POST /api/pay, withdraw to fresh accounts, and the command prints what each party knows next to what an
// on-chain observer sees, the latter read from the ledger's own RPC.
import { writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import type { Command } from 'commander';
import { Keypair, rpc } from '#stellar-sdk';
import { startLocalService } from '../demo/local-service.ts';
import { observe } from '../demo/observer.ts';
import { friendbot, PoolApi, PoolApiError } from '../../api/client.ts';
import type { PoolInfo } from '../../api/types.ts';
import { deposit, login } from '../demo/proxy-client.ts';
import {
  amountKnowledge,
  type DemoParty,
  knowledge,
  labeller,
  renderKnowledge,
  renderObserver,
  short,
  usdc,
} from '../demo/report.ts';

const DEFAULT_PROXY = 'http://127.0.0.1:8080';
const WALLET_USDC = 50;
const PLAN = [
  { name: 'alice', deposit: '20.0000000', withdraw: '5.0000000' },
  { name: 'bob', deposit: '15.0000000', withdraw: '4.0000000' },
];

export class DemoError extends Error {}

function parseProxyUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new DemoError(`--proxy must be an http(s) URL such as ${DEFAULT_PROXY}, got "${text}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new DemoError(`--proxy must be an http(s) URL such as ${DEFAULT_PROXY}, got "${text}"`);
  return url.origin;
}

interface Wallet {
  name: string;
  keypair: Keypair;
  api: PoolApi;
  agentId: string;
  destination: Keypair;
}

async function payments(info: PoolInfo, wallets: Wallet[], say: (s: string) => void) {
  const paid = new Map<string, DemoParty['payments']>(wallets.map((w) => [w.name, []]));
  const serviceUrl = info.payments?.demoServiceUrl;
  if (!serviceUrl || !info.payments?.enabled) {
    say('3. Payments: skipped (payments are not enabled on this proxy, or it has no demo x402 service)');
    return paid;
  }
  say(`3. Both agents pay ${serviceUrl} in the same batch (the answer comes after the batch ran)`);
  const results = await Promise.all(
    wallets.map((w) => w.api.pay({ agentId: w.agentId, serviceUrl, method: 'GET' })),
  );
  results.forEach((result, i) => {
    const w = wallets[i]!;
    if (result.paymentStatus !== 'confirmed' || !result.receipt)
      throw new DemoError(
        `the payment of ${w.agentId} did not confirm (${result.paymentStatus}${result.reason ? `: ${result.reason.detail}` : ''})`,
      );
    const r = result.receipt;
    paid.get(w.name)!.push({
      serviceUrl,
      amount: r.amount,
      payTo: r.payTo,
      transaction: r.transaction,
      batchId: result.batchId,
    });
    say(
      `   ${w.agentId}: ${r.amount} USDC to ${short(r.payTo)}, batch ${result.batchId}, transaction ${short(r.transaction)}`,
    );
  });
  return paid;
}

/** Names of the sandbox's own accounts (friendbot's network root, the token and ASP admin) for the table. */
async function sandboxAccounts(friendbotUrl: string, passphrase: string): Promise<Record<string, string>> {
  const names: Record<string, string> = { [Keypair.master(passphrase).publicKey()]: 'friendbot' };
  try {
    const info = (await (await fetch(new URL('/sandbox/info', friendbotUrl))).json()) as {
      accounts?: { admin?: string };
    };
    if (info.accounts?.admin) names[info.accounts.admin] = 'sandbox admin: USDC mint, ASP';
  } catch {
    // Only labels are lost.
  }
  return names;
}

/** The x402 facilitator's channel accounts (they submit the services' settlements), from its GET /supported. */
async function facilitatorAccounts(facilitatorUrl: string | undefined): Promise<Record<string, string>> {
  if (!facilitatorUrl) return {};
  try {
    const supported = (await (
      await fetch(new URL('supported', `${facilitatorUrl.replace(/\/$/, '')}/`))
    ).json()) as {
      signers?: Record<string, string[]>;
    };
    const signers = Object.values(supported.signers ?? {}).flat();
    return Object.fromEntries(signers.map((address) => [address, 'x402 facilitator channel']));
  } catch {
    return {}; // Only labels are lost.
  }
}

export async function runDemo(proxyText: string, jsonFile: string | undefined, say: (s: string) => void) {
  const proxyUrl = parseProxyUrl(proxyText);
  const client = new PoolApi({ baseUrl: proxyUrl });
  const info = await client.info();
  if (!info.friendbotUrl)
    throw new DemoError(
      `the demo funds its wallets with the sandbox friendbot, and the proxy at ${proxyUrl} runs on ${info.network} without one; run it against \`pool-proxy start\``,
    );
  const server = new rpc.Server(info.rpcUrl, { allowHttp: info.rpcUrl.startsWith('http://') });
  const startLedger = (await server.getLatestLedger()).sequence;
  say(
    `pool-proxy demo against ${proxyUrl} (${info.network}); ledger ${info.rpcUrl} from ledger ${startLedger}\n`,
  );

  say(`1. Two wallets from the sandbox friendbot (${WALLET_USDC} test USDC each), each logs in (SEP-53)`);
  const suffix = randomBytes(3).toString('hex');
  const wallets: Wallet[] = [];
  for (const { name } of PLAN) {
    const keypair = Keypair.random();
    const destination = Keypair.random();
    await friendbot(info.friendbotUrl, keypair.publicKey(), WALLET_USDC);
    await friendbot(info.friendbotUrl, destination.publicKey(), 0);
    const api = await login(client, keypair);
    wallets.push({ name, keypair, api, agentId: `${name}-agent-${suffix}`, destination });
    say(`   ${name.padEnd(6)} wallet ${keypair.publicKey()}`);
  }

  say('2. Each wallet deposits into its own agent (the proxy proves; the wallet signs the transaction)');
  const deposits: string[] = [];
  for (const [i, w] of wallets.entries()) {
    const amount = PLAN[i]!.deposit;
    const { txHash } = await deposit(w.api, w.keypair, w.agentId, amount, info.networkPassphrase);
    deposits.push(txHash);
    say(`   ${w.name.padEnd(6)} → agent ${w.agentId}: ${amount} USDC, transaction ${short(txHash)}`);
  }

  const paid = await payments(info, wallets, say);

  say('4. Each agent withdraws to a fresh account (the proxy operator relays; no wallet signs)');
  const withdrawals: string[] = [];
  for (const [i, w] of wallets.entries()) {
    const amount = PLAN[i]!.withdraw;
    const { txHash } = await w.api.withdraw({
      agentId: w.agentId,
      amount,
      destination: w.destination.publicKey(),
    });
    withdrawals.push(txHash);
    say(`   ${w.agentId} → ${w.destination.publicKey()}: ${amount} USDC, transaction ${short(txHash)}`);
  }

  say('5. Balances (each wallet can read only its own agents)');
  const parties: DemoParty[] = [];
  for (const [i, w] of wallets.entries()) {
    const { balance } = await w.api.balance(w.agentId);
    say(`   ${w.agentId}: ${balance} USDC`);
    parties.push({
      name: w.name,
      wallet: w.keypair.publicKey(),
      agentId: w.agentId,
      deposited: PLAN[i]!.deposit,
      depositTx: deposits[i]!,
      withdrawn: PLAN[i]!.withdraw,
      withdrawTx: withdrawals[i]!,
      destination: w.destination.publicKey(),
      balance,
      payments: paid.get(w.name) ?? [],
    });
  }
  const endLedger = (await server.getLatestLedger()).sequence;

  const view = await observe(info.rpcUrl, info.networkPassphrase, info.contracts, startLedger, endLedger);
  const rows = [
    ...knowledge(parties, view, info.contracts.pool, info.poolWallet),
    ...amountKnowledge(parties, view, info.contracts.pool, info.poolWallet),
  ];
  say('\nWhat each party knows ("observer" is computed from the chain below)\n');
  say(renderKnowledge(parties, rows));
  say(
    `\nWhat an on-chain observer sees: every transaction of ledgers ${startLedger}–${endLedger} (${info.rpcUrl})`,
  );
  say('(names in parentheses are added for reading; the chain shows only the addresses)\n');
  const others = {
    ...(await sandboxAccounts(info.friendbotUrl, info.networkPassphrase)),
    ...(await facilitatorAccounts(info.payments?.facilitatorUrl)),
  };
  say(
    renderObserver(
      view,
      labeller(
        parties,
        { pool: info.contracts.pool, poolWallet: info.poolWallet, operator: info.operator },
        others,
      ),
    ),
  );

  const report = {
    proxy: proxyUrl,
    network: info.network,
    rpcUrl: info.rpcUrl,
    contracts: info.contracts,
    poolWallet: info.poolWallet,
    operator: info.operator,
    startLedger,
    endLedger,
    parties,
    knowledge: rows,
    observer: {
      transactions: view.transactions,
      transfers: view.transfers.map((t) => ({ ...t, amount: usdc(t.amount) })),
      mints: view.mints.map((m) => ({ ...m, amount: usdc(m.amount) })),
      commitments: view.commitments,
      nullifiers: view.nullifiers,
    },
  };
  if (jsonFile) writeFileSync(jsonFile, `${JSON.stringify(report, null, 2)}\n`);
  return report;
}

export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description(
      'two wallets and agents deposit, pay and withdraw through a running proxy on the sandbox; prints what each party knows and what the chain shows',
    )
    .option('--proxy <url>', `the running proxy (default ${DEFAULT_PROXY})`)
    .option(
      '--start',
      'start a private `pool-proxy start` on free ports for the demo, and stop it afterwards',
    )
    .option('--json <file>', 'also write the report (parties, knowledge table, observed chain) as JSON')
    .action(async (opts: { proxy?: string; start?: boolean; json?: string }) => {
      let local: Awaited<ReturnType<typeof startLocalService>> | undefined;
      let failed = false;
      try {
        if (opts.start && opts.proxy !== undefined)
          throw new DemoError(
            'use either --proxy URL (a running proxy) or --start (a private one), not both',
          );
        if (opts.start) {
          console.log(
            'starting a private pool-proxy (sandbox, prover daemon, facilitator, demo service, proxy)…',
          );
          local = await startLocalService();
        }
        await runDemo(local?.proxyUrl ?? opts.proxy ?? DEFAULT_PROXY, opts.json, (line) => console.log(line));
      } catch (error) {
        failed = true;
        if (error instanceof PoolApiError) console.error(`pool-proxy demo: ${error.title}: ${error.detail}`);
        else console.error(`pool-proxy demo: ${(error as Error).message}`);
      } finally {
        await local?.stop();
      }
      if (failed) process.exit(1);
    });
}
