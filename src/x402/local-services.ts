// The local x402 pair `pool-proxy start` runs beside the embedded sandbox: our facilitator (fresh channel
// accounts created through friendbot) and the demo paid service (paid to a fresh demo account, settling
// through the facilitator's in-process client; the facilitator still serves other services over HTTP), and
// the environment that tells the proxy about them.

import { Keypair } from '#stellar-sdk';
import { startDemoService, type DemoServiceHandle } from './demo-service.ts';
import { ensureChannelAccounts, startFacilitator, type FacilitatorHandle } from './facilitator/index.ts';

/**
 * Channel accounts of the local facilitator unless told otherwise: settlements that can land in one ledger
 * (a burst of 1000 payments needs four ledgers). The sandbox's friendbot makes them all in one ledger.
 */
export const LOCAL_CHANNELS = 256;
/**
 * How often the local facilitator looks for its settlements on the ledger: the sandbox is its own, and
 * closes a ledger every second, so a channel account is free again sooner than with the default 250 ms.
 */
const LOCAL_POLL_MS = 100;

export interface LocalX402Options {
  rpcUrl: string;
  networkPassphrase: string;
  /** token contract id the demo service is priced in */
  asset: string;
  facilitator: { host: string; port: number };
  demo: { host: string; port: number; maxTimeoutSeconds?: number };
  /** how many fresh channel accounts to create (default LOCAL_CHANNELS) */
  channelCount?: number;
}

export interface LocalX402 {
  facilitator: FacilitatorHandle;
  demo: DemoServiceHandle;
  demoPayTo: string;
  close(): Promise<void>;
}

export async function startLocalX402(opts: LocalX402Options): Promise<LocalX402> {
  const channels = Array.from({ length: opts.channelCount ?? LOCAL_CHANNELS }, () => Keypair.random());
  const payTo = Keypair.random();
  // the embedded sandbox's friendbot: every account in the same ledger
  await ensureChannelAccounts(opts.rpcUrl, [...channels, payTo], channels.length + 1);
  const facilitator = await startFacilitator({
    ...opts.facilitator,
    rpcUrl: opts.rpcUrl,
    networkPassphrase: opts.networkPassphrase,
    channels,
    pollMs: LOCAL_POLL_MS,
  });
  let demo: DemoServiceHandle;
  try {
    demo = await startDemoService({
      ...opts.demo,
      facilitator: facilitator.client,
      network: facilitator.network,
      asset: opts.asset,
      payTo: payTo.publicKey(),
    });
  } catch (e) {
    await facilitator.close();
    throw e;
  }
  return {
    facilitator,
    demo,
    demoPayTo: payTo.publicKey(),
    close: async () => {
      await demo.close();
      await facilitator.close();
    },
  };
}

/** Where a running local pair answers (what the proxy and the CLI need of it). */
export interface LocalX402Urls {
  facilitator: { url: string; network: string };
  demo: { url: string; quoteUrl: string; echoUrl: string };
  demoPayTo: string;
}

/** The proxy environment for a running local pair: facilitator and demo URLs, the demo host allow-listed. */
export function localX402Env(
  local: LocalX402Urls,
  existingAllowed: string | undefined,
): Record<string, string> {
  const demoHost = new URL(local.demo.url).host;
  const allowed = (existingAllowed ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (!allowed.includes(demoHost)) allowed.push(demoHost);
  return {
    POOL_PROXY_X402_FACILITATOR_URL: local.facilitator.url,
    POOL_PROXY_X402_DEMO_URL: local.demo.quoteUrl,
    POOL_PROXY_PAY_ALLOWED_HOSTS: allowed.join(','),
  };
}
