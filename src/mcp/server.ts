// The MCP server of the pool: tools pool_deposit, pool_pay, pool_balance, pool_policy, pool_withdraw and
// pool_stats (and, for wallets, pool_deposit_submit; with an agent token only pool_pay, pool_balance,
// pool_policy and pool_stats), one file each in tools/, each a thin call of the proxy's REST API
// through the shared client (src/api/client.ts). Results carry structuredContent plus a short text; refusals
// are isError results whose text is the problem (code, detail). `connectPoolMcpServer` connects it to a transport
// with tools/call's params checked first (tool-calls.ts).
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { PoolApi } from '../api/client.ts';
import { VERSION } from '../version.ts';
import { guardToolCalls } from './tool-calls.ts';
import { type PoolMcpMode, toolContext } from './tool-kit.ts';
import { registerBalance } from './tools/balance.ts';
import { registerDepositSubmit } from './tools/deposit-submit.ts';
import { registerOperatorDeposit, registerWalletDeposit } from './tools/deposit.ts';
import { registerPay } from './tools/pay.ts';
import { registerPolicy } from './tools/policy.ts';
import { registerStats } from './tools/stats.ts';
import { registerWithdraw } from './tools/withdraw.ts';

export interface PoolMcpOptions {
  api: PoolApi;
  mode: PoolMcpMode;
}

/** The names of the tools each server offers (recorded as they are registered). */
const offered = new WeakMap<McpServer, ReadonlySet<string>>();

export function createPoolMcpServer({ api, mode }: PoolMcpOptions): McpServer {
  const server = new McpServer(
    { name: 'privacy-pool-proxy', version: VERSION },
    {
      instructions:
        'Tools of a shielded USDC pool on Stellar. pool_pay pays x402 services from the agent’s private balance ' +
        'through a batch, so on chain nobody can tell which agent paid. Amounts are USDC decimal strings.',
    },
  );
  const names = new Set<string>();
  server.registerTool = new Proxy(server.registerTool, {
    apply(register, self, args: Parameters<McpServer['registerTool']>) {
      names.add(args[0]);
      return Reflect.apply(register, self, args) as ReturnType<McpServer['registerTool']>;
    },
  });
  offered.set(server, names);
  const context = toolContext(server, api, mode);
  if (mode.kind === 'operator') {
    registerOperatorDeposit(context, mode.agentId);
  } else if (mode.kind === 'wallet') {
    // A wallet's MCP call must never reach the operator-funded deposit: the wallet signs its own deposit.
    registerWalletDeposit(context, mode.wallet);
    registerDepositSubmit(context);
  }
  registerPay(context);
  registerBalance(context);
  registerPolicy(context);
  // An agent token never moves money out (the proxy would refuse it anyway): no withdraw tool for it.
  if (mode.kind !== 'agent') registerWithdraw(context);
  registerStats(context);
  return server;
}

/** Connects `server` to `transport`; a tools/call with bad params or an unknown tool is refused with -32602. */
export async function connectPoolMcpServer(server: McpServer, transport: Transport): Promise<void> {
  await server.connect(transport);
  const names = offered.get(server) ?? new Set<string>();
  guardToolCalls(transport, (name) => names.has(name));
}
