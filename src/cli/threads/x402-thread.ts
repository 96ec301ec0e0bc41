// The local x402 pair (our facilitator and the demo paid service) on its own worker thread (see
// thread.ts), as startLocalX402 starts them: verifying and settling payments then runs beside the proxy
// that makes them instead of on the same event loop.
import { type LocalX402Options, type LocalX402Urls, startLocalX402 } from '../../x402/local-services.ts';
import { serveThread, startThread, type ThreadHandle, type ThreadOptions } from './thread.ts';

const PART = 'local-x402';

export interface LocalX402Thread extends LocalX402Urls {
  close(): Promise<void>;
  utilization: ThreadHandle<unknown>['utilization'];
}

export async function startLocalX402Thread(
  opts: LocalX402Options,
  thread: ThreadOptions = {},
): Promise<LocalX402Thread> {
  const t = await startThread<LocalX402Urls>(new URL(import.meta.url), PART, opts, thread);
  return { ...t.info, close: t.close, utilization: t.utilization };
}

serveThread<LocalX402Options, LocalX402Urls>(PART, async (opts) => {
  const local = await startLocalX402(opts);
  const { facilitator, demo, demoPayTo } = local;
  return {
    info: {
      facilitator: { url: facilitator.url, network: facilitator.network },
      demo: { url: demo.url, quoteUrl: demo.quoteUrl, echoUrl: demo.echoUrl },
      demoPayTo,
    },
    close: () => local.close(),
  };
});
