// The `pool-proxy` command tree, loaded no further than the command line needs: each sub-command lives in its
// own file under ./commands and imports its own heavy parts (the sandbox, the prover, the proxy, the x402
// packages), so only the command being run is imported. `--version`, `--help` and an unknown command import
// none: the top-level help lists each command by the one-line summary below (a test holds each equal to the
// description its command sets), and `help <command>` loads that command for its own help.
import { Command } from 'commander';
import { VERSION } from '../version.ts';

type Register = (program: Command) => void;

interface CommandEntry {
  /** the command's description, as the top-level help lists it */
  summary: string;
  load: () => Promise<Register>;
}

export const COMMANDS: Record<string, CommandEntry> = {
  start: {
    summary: 'start the whole service (sandbox ledger, prover daemon, proxy) on the embedded sandbox',
    load: async () => (await import('./commands/start.ts')).registerStart,
  },
  sandbox: {
    summary: 'run the embedded sandbox ledger (Soroban RPC, friendbot) with the pool contracts deployed',
    load: async () => (await import('./commands/sandbox.ts')).registerSandbox,
  },
  keys: {
    summary: 'install or create Groth16 proving keys',
    load: async () => (await import('./commands/keys.ts')).registerKeys,
  },
  prover: {
    summary: 'run the prover daemon (gRPC) for every circuit under the circuits folder',
    load: async () => (await import('./commands/prover.ts')).registerProver,
  },
  demo: {
    summary:
      'two wallets and agents deposit, pay and withdraw through a running proxy on the sandbox; prints what each party knows and what the chain shows',
    load: async () => (await import('./commands/demo.ts')).registerDemo,
  },
  mcp: {
    summary: 'MCP server (stdio) for one local AI agent, acting through a running proxy as its operator',
    load: async () => (await import('./commands/mcp.ts')).registerMcp,
  },
  agents: {
    summary: "the operator's agents: read and set their policy, freeze and unfreeze them",
    load: async () => (await import('./commands/agents.ts')).registerAgents,
  },
  facilitator: {
    summary: 'run the x402 exact facilitator for Stellar (verify and settle with channel accounts)',
    load: async () => (await import('./commands/facilitator.ts')).registerFacilitator,
  },
  store: {
    summary: "check, rebuild or move the proxy's encrypted store",
    load: async () => (await import('./commands/store.ts')).registerStore,
  },
  serve: {
    summary: 'run the proxy alone against the configured ledger RPC, prover daemons and store (one replica)',
    load: async () => (await import('./commands/serve.ts')).registerServe,
  },
  contracts: {
    summary: 'deploy the pool contracts to a Stellar network',
    load: async () => (await import('./commands/contracts.ts')).registerContracts,
  },
};

/** The command named at `argv[index]`, if it is one of ours. */
function commandAt(argv: readonly string[], index: number): CommandEntry | undefined {
  const name = argv[index];
  return name !== undefined && Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
}

/** The program for `argv` (node, script, args…): the named command in full, every other one as a summary. */
export async function cliProgram(argv: readonly string[]): Promise<Command> {
  const program = new Command('pool-proxy')
    .description('Privacy Pool Proxy: shielded USDC on Stellar')
    .version(VERSION);
  const named = commandAt(argv, 2) ?? (argv[2] === 'help' ? commandAt(argv, 3) : undefined);
  for (const [name, entry] of Object.entries(COMMANDS)) {
    if (entry === named) (await entry.load())(program);
    else program.command(name).description(entry.summary);
  }
  return program;
}
