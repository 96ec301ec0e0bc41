// x402 settlement throughput on the sandbox: N payments to the demo service, signed first (quote + sign, one
// at a time, timed), then sent all at once through our facilitator. Side by side in one run: the facilitator
// with 1 channel account vs with C channel accounts (ratio = what channels buy, since an account settles one
// payment per ledger). Reports wall time of the burst and the ledgers it spanned.
// Usage: npx tsx bench/x402/settle.ts [payments=32] [channels=16] [ledgerMs=250]
import { Keypair, rpc } from '#stellar-sdk';
import { STANDALONE_PASSPHRASE } from '../../src/ledger/networks.ts';
import { startPoolSandbox } from '../../src/deploy/sandbox-network.ts';
import { startDemoService } from '../../src/x402/demo-service.ts';
import { ensureChannelAccounts, startFacilitator } from '../../src/x402/facilitator/index.ts';
import { quote, send, sign, type PayerNetwork, type SignedPayment } from '../../src/x402/index.ts';

const [payments = 32, channelCount = 16, ledgerMs = 250] = process.argv.slice(2).map(Number);

const sandbox = await startPoolSandbox({ port: 0, ledgerMs });
try {
  const server = new rpc.Server(sandbox.rpcUrl, { allowHttp: true });
  const token = sandbox.info.contracts.token;
  const poolWallet = Keypair.fromSecret(sandbox.secrets().poolWallet);
  await fetch(`${sandbox.url}/friendbot?addr=${poolWallet.publicKey()}&usdc=1000`);
  const payer: PayerNetwork = {
    rpcUrl: sandbox.rpcUrl,
    networkPassphrase: STANDALONE_PASSPHRASE,
    asset: token,
  };

  const rows: { channels: number; signMs: number; wallMs: number; ledgers: number }[] = [];
  for (const channels of [1, channelCount]) {
    const keys = Array.from({ length: channels }, () => Keypair.random());
    await ensureChannelAccounts(sandbox.rpcUrl, keys);
    const facilitator = await startFacilitator({
      port: 0,
      rpcUrl: sandbox.rpcUrl,
      networkPassphrase: STANDALONE_PASSPHRASE,
      channels: keys,
    });
    const demo = await startDemoService({
      port: 0,
      facilitator: facilitator.url,
      network: facilitator.network,
      asset: token,
      payTo: Keypair.random().publicKey(),
    });
    const fetchOpts = { allowedHosts: [new URL(demo.url).host] };
    const signed: SignedPayment[] = [];
    const t0 = performance.now();
    for (let i = 0; i < payments; i++)
      signed.push(await sign(await quote({ url: demo.quoteUrl }, payer, fetchOpts), poolWallet, payer));
    const signMs = (performance.now() - t0) / payments;
    const t1 = performance.now();
    // the burst may queue on one channel for longer than safeFetch's default 10 s
    const results = await Promise.all(
      signed.map((s) => send({ url: demo.quoteUrl }, s, { ...fetchOpts, timeoutMs: 300_000 })),
    );
    const wallMs = performance.now() - t1;
    const ledgerOf = await Promise.all(
      results.map(async (r) => {
        if (!r.settlement?.success) throw new Error(`not settled: ${r.status} ${r.body}`);
        const tx = await server.getTransaction(r.settlement.transaction);
        return tx.status === rpc.Api.GetTransactionStatus.SUCCESS ? tx.ledger : 0;
      }),
    );
    rows.push({ channels, signMs, wallMs, ledgers: Math.max(...ledgerOf) - Math.min(...ledgerOf) + 1 });
    await demo.close();
    await facilitator.close();
  }
  console.log(`${payments} payments, ledger every ${ledgerMs} ms`);
  console.log('channels | quote+sign ms/payment | burst wall ms | ledgers spanned');
  for (const r of rows)
    console.log(
      `${String(r.channels).padStart(8)} | ${r.signMs.toFixed(1).padStart(21)} | ${r.wallMs.toFixed(0).padStart(13)} | ${r.ledgers}`,
    );
  const [one, many] = rows as [(typeof rows)[0], (typeof rows)[0]];
  console.log(
    `burst wall time ratio 1 channel / ${channelCount} channels: ${(one.wallMs / many.wallMs).toFixed(1)}`,
  );
} finally {
  await sandbox.close();
}
