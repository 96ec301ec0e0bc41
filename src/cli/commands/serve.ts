// `pool-proxy serve`: the proxy alone, against the ledger RPC, prover daemons and store its environment names
// (docs/CONFIG.md) — one replica of a deployment behind a load balancer (docs/DEPLOYMENT.md). Nothing else is
// started: no sandbox, no prover, no facilitator. SIGTERM/SIGINT stop it gracefully (queued payments run,
// leadership is handed over).
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { loadConfig } from '../../proxy/config.ts';
import { startProxy } from '../../proxy/server.ts';
import { createLogger } from '../../proxy/util/logger.ts';

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description(
      'run the proxy alone against the configured ledger RPC, prover daemons and store (one replica)',
    )
    .option(
      '--data-dir <dir>',
      'directory of the master key file and the LevelDB store',
      process.env.POOL_PROXY_DATA_DIR ?? './data',
    )
    .action(async (opts: { dataDir: string }) => {
      const logger = createLogger();
      try {
        const config = loadConfig({ ...process.env, POOL_PROXY_DATA_DIR: resolve(opts.dataDir) });
        const proxy = await startProxy(config, { logger: logger.child({ component: 'proxy' }) });
        let stopping = false;
        const shutdown = async (signal: string) => {
          if (stopping) return;
          stopping = true;
          logger.log('info', `stopping (${signal})…`);
          await proxy.close().catch((e) => logger.log('error', `stop: ${(e as Error).message}`));
          logger.log('info', 'stopped.');
          process.exit(0);
        };
        process.once('SIGINT', () => void shutdown('SIGINT'));
        process.once('SIGTERM', () => void shutdown('SIGTERM'));
        logger.log('info', "proxy: connecting to the ledger and the prover, reading the pool's events…");
        await proxy.ready;
        logger.log('info', `proxy           ${proxy.url}   (GET /health, /openapi.json, /api/pool/info)`, {
          url: proxy.url,
        });
        logger.log('info', 'ready.');
      } catch (error) {
        logger.log('error', `pool-proxy serve: ${(error as Error).message}`);
        process.exit(1);
      }
    });
}
