// `pool-proxy facilitator`: runs our x402 `exact` facilitator for Stellar alone (POST /verify, POST /settle,
// GET /supported, GET /health). Channel accounts come from POOL_PROXY_FACILITATOR_SECRETS (comma-separated
// S… seeds); without it, fresh channel accounts are made for this run, which needs a network with a
// friendbot (the sandbox, testnet). Channel accounts that do not exist yet are created through friendbot.

import type { Command } from 'commander';
import { parseListen } from '../../listen.ts';
import { parseIntFlag, parsePassphrase, parseRpcUrl } from '../flags.ts';

interface FacilitatorCliOptions {
  listen: string;
  rpcUrl: string;
  networkPassphrase?: string;
  channels: string;
  maxFee: string;
}

export function registerFacilitator(program: Command): void {
  program
    .command('facilitator')
    .description('run the x402 exact facilitator for Stellar (verify and settle with channel accounts)')
    .option(
      '--listen <host:port>',
      'address to serve on',
      process.env.POOL_PROXY_FACILITATOR_LISTEN ?? '127.0.0.1:8402',
    )
    .option(
      '--rpc-url <url>',
      'Soroban RPC of the network',
      process.env.POOL_PROXY_RPC_URL ?? 'http://127.0.0.1:8000/rpc',
    )
    .option(
      '--network-passphrase <text>',
      'network passphrase (default: the RPC network; must match it)',
      process.env.POOL_PROXY_NETWORK_PASSPHRASE,
    )
    .option(
      '--channels <n>',
      'channel accounts to create when POOL_PROXY_FACILITATOR_SECRETS is not set',
      process.env.POOL_PROXY_FACILITATOR_CHANNELS ?? '16',
    )
    .option('--max-fee <stroops>', 'largest transaction fee paid for a settlement', '50000')
    .action(async (opts: FacilitatorCliOptions) => {
      try {
        const { host, port } = parseListen(opts.listen);
        const rpcUrl = parseRpcUrl(opts.rpcUrl);
        const maxFeeStroops = parseIntFlag('--max-fee', opts.maxFee, 100, 100_000_000);
        const secrets = process.env.POOL_PROXY_FACILITATOR_SECRETS;
        const channelCount = secrets ? 0 : parseIntFlag('--channels', opts.channels, 1, 256);
        const passphrase =
          opts.networkPassphrase === undefined ? undefined : parsePassphrase(opts.networkPassphrase);
        // The SDK, the x402 packages and the facilitator load only once the flags are known to be good.
        const [{ Keypair }, { ensureChannelAccounts, parseChannelSecrets, startFacilitator }, { rpcServer }] =
          await Promise.all([
            import('#stellar-sdk'),
            import('../../x402/facilitator/index.ts'),
            import('../../ledger/rpc-server.ts'),
          ]);
        const channels = secrets
          ? parseChannelSecrets(secrets)
          : Array.from({ length: channelCount }, () => Keypair.random());
        const network = await rpcServer(rpcUrl)
          .getNetwork()
          .catch((e: Error) => {
            throw new Error(`cannot reach the RPC at ${rpcUrl}: ${e.message}`);
          });
        const networkPassphrase = passphrase ?? network.passphrase;
        if (networkPassphrase !== network.passphrase)
          throw new Error(`the RPC serves "${network.passphrase}", not "${networkPassphrase}"`);
        await ensureChannelAccounts(rpcUrl, channels);
        const handle = await startFacilitator({
          host,
          port,
          rpcUrl,
          networkPassphrase,
          channels,
          maxFeeStroops,
        });
        console.log(
          `facilitator     ${handle.url}   (${handle.network}, ${channels.length} channel accounts)`,
        );
        console.log('ready.');
        const stop = async () => {
          await handle.close();
          process.exit(0);
        };
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      } catch (err) {
        console.error(`pool-proxy facilitator: ${(err as Error).message}`);
        process.exit(1);
      }
    });
}
