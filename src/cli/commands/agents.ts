// `pool-proxy agents policy|freeze|unfreeze`: the operator reads and sets the policy of its own agents (the
// local MCP agents) through a running proxy's REST API, with the operator token from the proxy's data
// directory, exactly like `pool-proxy mcp`. `policy <agentId>` alone prints the policy and what is left of
// each budget; with flags it changes what the flags name and keeps the rest.
import type { Command } from 'commander';
import { PoolApi, PoolApiError } from '../../api/client.ts';
import type { AgentPolicyRequest, AgentPolicyView } from '../../api/types.ts';
import { loadConfig } from '../../proxy/config.ts';
import { readOperatorToken } from '../../proxy/auth/operator-token.ts';
import { DEFAULT_PROXY_URL, dataDirOf, parseAgentId, parseProxyUrl } from './mcp.ts';

interface CommonFlags {
  proxy: string;
  dataDir?: string;
  json?: boolean;
}

interface PolicyFlags extends CommonFlags {
  cap?: string;
  budgetHour?: string;
  budgetDay?: string;
  budget30d?: string;
  allow?: string;
  deny?: string;
  approvalThreshold?: string;
  approvalTimeout?: string;
}

export function registerAgents(program: Command): void {
  const agents = program
    .command('agents')
    .description("the operator's agents: read and set their policy, freeze and unfreeze them");
  const common = (command: Command) =>
    command
      .option('--proxy <url>', 'origin of the running proxy', parseProxyUrl, DEFAULT_PROXY_URL)
      .option('--data-dir <dir>', "the proxy's data directory, which holds its operator token")
      .option('--json', 'print the answer as JSON');
  common(
    agents
      .command('policy')
      .argument('<agentId>', 'the operator’s agent', parseAgentId)
      .description(
        'print the agent’s policy and what is left of each budget; with flags, change what they name (USDC amounts, "none" to remove)',
      )
      .option('--cap <usdc>', 'per-payment cap')
      .option('--budget-hour <usdc>', 'budget over any rolling hour')
      .option('--budget-day <usdc>', 'budget over any rolling 24 hours')
      .option('--budget-30d <usdc>', 'budget over any rolling 30 days')
      .option(
        '--allow <urls>',
        'comma-separated services it may pay (origins, optionally path prefixes); "" for any',
      )
      .option('--deny <urls>', 'comma-separated services it may never pay; "" for none')
      .option('--approval-threshold <usdc>', 'a payment above this price waits for your approval')
      .option('--approval-timeout <seconds>', 'how long such a payment waits before it expires unpaid'),
  ).action((agentId: string, opts: PolicyFlags) => run(opts, (api) => policy(api, agentId, opts)));
  for (const [name, frozen] of [
    ['freeze', true],
    ['unfreeze', false],
  ] as const)
    common(
      agents
        .command(name)
        .argument('<agentId>', 'the operator’s agent', parseAgentId)
        .description(
          frozen ? 'refuse every payment of the agent until it is unfrozen' : 'let the agent pay again',
        ),
    ).action((agentId: string, opts: CommonFlags) => run(opts, (api) => api.setFrozen(agentId, frozen)));
}

async function run(opts: CommonFlags, action: (api: PoolApi) => Promise<AgentPolicyView>): Promise<void> {
  try {
    const { tokenFile } = loadConfig({
      ...process.env,
      POOL_PROXY_DATA_DIR: dataDirOf(opts.dataDir),
    }).operator;
    const token = readOperatorToken(tokenFile);
    if (token === undefined)
      throw new Error(`no operator token in ${tokenFile}: start the proxy or give its --data-dir`);
    const view = await action(new PoolApi({ baseUrl: opts.proxy, caller: { kind: 'operator', token } }));
    process.stdout.write(opts.json ? `${JSON.stringify(view, null, 2)}\n` : describe(view));
  } catch (error) {
    const detail =
      error instanceof PoolApiError ? `${error.code}: ${error.message}` : (error as Error).message;
    process.stderr.write(`pool-proxy agents: ${detail}\n`);
    process.exit(error instanceof PoolApiError ? 1 : 2);
  }
}

async function policy(api: PoolApi, agentId: string, opts: PolicyFlags): Promise<AgentPolicyView> {
  const current = await api.policy(agentId);
  const changes = [
    opts.cap,
    opts.budgetHour,
    opts.budgetDay,
    opts.budget30d,
    opts.allow,
    opts.deny,
    opts.approvalThreshold,
    opts.approvalTimeout,
  ];
  if (changes.every((c) => c === undefined)) return current;
  const amount = (flag: string | undefined, now: string | null) =>
    flag === undefined ? now : flag === 'none' ? null : flag;
  const list = (flag: string | undefined, now: string[]) =>
    flag === undefined
      ? now
      : flag
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
  const request: AgentPolicyRequest = {
    perPaymentCap: amount(opts.cap, current.perPaymentCap),
    budgetPerHour: amount(opts.budgetHour, current.budgetPerHour),
    budgetPerDay: amount(opts.budgetDay, current.budgetPerDay),
    budgetPer30Days: amount(opts.budget30d, current.budgetPer30Days),
    allowedServices: list(opts.allow, current.allowedServices),
    deniedServices: list(opts.deny, current.deniedServices),
    approvalThreshold: amount(opts.approvalThreshold, current.approvalThreshold),
    approvalTimeoutSeconds:
      opts.approvalTimeout === undefined
        ? current.approvalTimeoutSeconds
        : opts.approvalTimeout === 'none'
          ? null
          : Number(opts.approvalTimeout),
  };
  return api.setPolicy(agentId, request);
}

function describe(view: AgentPolicyView): string {
  const lines = [
    `agent ${view.agentId}${view.frozen ? ' (FROZEN: it pays nothing)' : ''}`,
    `  per-payment cap: ${view.effective.perPaymentCap} USDC${view.perPaymentCap === null ? ' (the operator’s)' : ''}`,
  ];
  for (const [window, state] of Object.entries(view.effective.budgets))
    lines.push(
      `  budget ${window}: ${state === null ? 'none' : `${state.remaining} of ${state.budget} USDC left (${state.spent} spent)`}`,
    );
  lines.push(`  allowed services: ${view.allowedServices.join(', ') || 'any'}`);
  lines.push(`  denied services: ${view.deniedServices.join(', ') || 'none'}`);
  lines.push(
    `  approval: ${view.approvalThreshold === null ? 'none needed' : `above ${view.approvalThreshold} USDC, waits up to ${view.approvalTimeoutSeconds} s`}`,
  );
  return `${lines.join('\n')}\n`;
}
