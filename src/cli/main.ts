// Entry point of the `pool-proxy` CLI: each sub-command lives in its own file under ./commands.
import { Command } from 'commander';
import { registerStart } from './commands/start.ts';
import { registerSandbox } from './commands/sandbox.ts';
import { registerKeys } from './commands/keys.ts';
import { registerProver } from './commands/prover.ts';
import { registerDemo } from './commands/demo.ts';
import { registerMcp } from './commands/mcp.ts';
import { registerFacilitator } from './commands/facilitator.ts';
import { registerStore } from './commands/store.ts';
import { registerServe } from './commands/serve.ts';
import { VERSION } from '../version.ts';

const program = new Command('pool-proxy')
  .description('Privacy Pool Proxy: shielded USDC on Stellar')
  .version(VERSION);
registerStart(program);
registerSandbox(program);
registerKeys(program);
registerProver(program);
registerDemo(program);
registerMcp(program);
registerFacilitator(program);
registerStore(program);
registerServe(program);

await program.parseAsync(process.argv);
