// `pool-proxy mcp`: the MCP server for one local AI agent over stdio. It talks to a running proxy as the
// proxy's operator acting for that agent, with the operator's token read from the proxy's configuration (the
// file operator.token in the data directory, as `pool-proxy start` leaves it: no extra step). stdout carries
// the MCP protocol only; messages go to stderr.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type Command, InvalidArgumentError } from 'commander';
import { AGENT_ID_PATTERN } from '../../api/agent-id.ts';
import { isLoopbackAddress } from '../../http/loopback.ts';
import { runStdioServer } from '../../mcp/stdio.ts';
import { loadConfig } from '../../proxy/config.ts';
import { readOperatorToken } from '../../proxy/auth/operator-token.ts';

export const DEFAULT_PROXY_URL = 'http://127.0.0.1:8080';
export const DEFAULT_AGENT_ID = 'mcp-agent';

/** An http(s) origin of the proxy, without path, query or credentials. */
export function parseProxyUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new InvalidArgumentError(`not a URL: ${JSON.stringify(text)} (e.g. ${DEFAULT_PROXY_URL})`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new InvalidArgumentError(`must be http:// or https://, got ${url.protocol}`);
  }
  if (
    url.username ||
    url.password ||
    url.search ||
    url.hash ||
    (url.pathname !== '/' && url.pathname !== '')
  ) {
    throw new InvalidArgumentError(
      `must be the proxy's origin only (e.g. ${DEFAULT_PROXY_URL}), got ${text}`,
    );
  }
  return url.origin;
}

export function parseAgentId(text: string): string {
  if (!AGENT_ID_PATTERN.test(text) || text === '.' || text === '..') {
    throw new InvalidArgumentError(
      `must be 1–64 characters of A-Z a-z 0-9 . _ : - (not "." or ".."), got ${JSON.stringify(text)}`,
    );
  }
  return text;
}

/** An MCP client may start us in any folder: the installation's own data folder is the last guess. */
const INSTALLATION_DATA_DIR = fileURLToPath(new URL('../../../data', import.meta.url));

export function dataDirOf(flag: string | undefined): string {
  if (flag !== undefined) return flag;
  if (process.env.POOL_PROXY_DATA_DIR) return process.env.POOL_PROXY_DATA_DIR;
  const here = loadConfig({ ...process.env, POOL_PROXY_DATA_DIR: './data' }).operator.tokenFile;
  return existsSync(here) ? './data' : INSTALLATION_DATA_DIR;
}

function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || isLoopbackAddress(hostname.replace(/^\[|\]$/g, ''));
}

export function registerMcp(program: Command): void {
  program
    .command('mcp')
    .description('MCP server (stdio) for one local AI agent, acting through a running proxy as its operator')
    .option('--proxy <url>', 'origin of the running proxy (loopback)', parseProxyUrl, DEFAULT_PROXY_URL)
    .option(
      '--agent-id <id>',
      'agent the tools act for (default: $POOL_PROXY_MCP_AGENT_ID or mcp-agent)',
      parseAgentId,
    )
    .option(
      '--data-dir <dir>',
      "the proxy's data directory, which holds its operator token (default: $POOL_PROXY_DATA_DIR, else ./data " +
        'when it holds one, else the data folder of this installation, where `npm start` keeps it)',
    )
    .action(async (opts: { proxy: string; agentId?: string; dataDir?: string }) => {
      let agentId: string;
      try {
        agentId = opts.agentId ?? parseAgentId(process.env.POOL_PROXY_MCP_AGENT_ID || DEFAULT_AGENT_ID);
      } catch (error) {
        process.stderr.write(`pool-proxy mcp: POOL_PROXY_MCP_AGENT_ID ${(error as Error).message}\n`);
        process.exit(2);
      }
      let operatorToken: string | undefined;
      try {
        const { tokenFile } = loadConfig({
          ...process.env,
          POOL_PROXY_DATA_DIR: dataDirOf(opts.dataDir),
        }).operator;
        operatorToken = readOperatorToken(tokenFile);
        if (operatorToken === undefined)
          process.stderr.write(
            `pool-proxy mcp: warning: no operator token in ${tokenFile} (start the proxy first, or give its ` +
              '--data-dir); without it the proxy refuses operator calls unless it runs with ' +
              'POOL_PROXY_OPERATOR_LOOPBACK=true\n',
          );
      } catch (error) {
        process.stderr.write(`pool-proxy mcp: ${(error as Error).message}\n`);
        process.exit(2);
      }
      const host = new URL(opts.proxy).hostname;
      if (!isLoopbackHost(host) && new URL(opts.proxy).protocol !== 'https:') {
        process.stderr.write(
          `pool-proxy mcp: warning: ${host} is not a loopback address and the connection is not https; the ` +
            'operator token would cross the network in clear\n',
        );
      }
      const { closed } = await runStdioServer({ proxyUrl: opts.proxy, agentId, operatorToken });
      await closed;
      process.exit(0);
    });
}
