import type { Command } from 'commander';

// `pool-proxy start`: starts every component of the service on its default address (filled in as they land).
export function registerStart(program: Command): void {
  program
    .command('start')
    .description('start the whole service on the embedded sandbox ledger')
    .action(async () => {
      console.log('pool-proxy: no network components are available yet; run `npm test` to exercise the crypto core and circuit.');
    });
}
