// Entry point of the `pool-proxy` CLI: each sub-command lives in its own file under ./commands. Only the
// command being run is loaded (each one imports its own heavy parts: the sandbox, the prover, the proxy, the
// x402 packages), so `pool-proxy mcp`, a `--help` or a refused flag starts in a fraction of a second
// rather than loading the whole service; with no known command, all are registered for the help.
import { Command } from 'commander';
import { VERSION } from '../version.ts';

type Register = (program: Command) => void;

const COMMANDS: Record<string, () => Promise<Register>> = {
  start: async () => (await import('./commands/start.ts')).registerStart,
  sandbox: async () => (await import('./commands/sandbox.ts')).registerSandbox,
  keys: async () => (await import('./commands/keys.ts')).registerKeys,
  prover: async () => (await import('./commands/prover.ts')).registerProver,
  demo: async () => (await import('./commands/demo.ts')).registerDemo,
  mcp: async () => (await import('./commands/mcp.ts')).registerMcp,
  agents: async () => (await import('./commands/agents.ts')).registerAgents,
  facilitator: async () => (await import('./commands/facilitator.ts')).registerFacilitator,
  store: async () => (await import('./commands/store.ts')).registerStore,
  serve: async () => (await import('./commands/serve.ts')).registerServe,
  contracts: async () => (await import('./commands/contracts.ts')).registerContracts,
};

const program = new Command('pool-proxy')
  .description('Privacy Pool Proxy: shielded USDC on Stellar')
  .version(VERSION);
const named = process.argv[2];
const load =
  named !== undefined && Object.hasOwn(COMMANDS, named) ? [COMMANDS[named]!] : Object.values(COMMANDS);
for (const register of await Promise.all(load.map((loader) => loader()))) register(program);

await program.parseAsync(process.argv);
