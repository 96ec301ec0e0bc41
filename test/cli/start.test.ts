// `pool-proxy start` as a real process: the embedded sandbox, prover daemon and proxy come up on the given
// addresses, the sandbox operator is funded, the operator's token is left in the data directory and
// `pool-proxy mcp` uses it with no extra step (an operator-funded deposit through its pool_deposit tool), SIGTERM
// stops it cleanly, `store recover` on its data directory uses the embedded ledger there and the next start has
// the balance back, and bad flags are refused.
import test from 'ava';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Address, Contract, TransactionBuilder, rpc, scValToNative } from '#stellar-sdk';
import { freeLoopbackPort as freePort } from '../../src/listen.ts';
import { CLI, runCli, runStart } from '../helpers/cli.ts';

test('pool-proxy start runs sandbox, prover daemon and proxy, funds the sandbox operator, and stops on SIGTERM', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'pool-proxy-start-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const [sandboxPort, proverPort, proxyPort] = [await freePort(), await freePort(), await freePort()];
  const s = runStart(
    { dataDir, sandbox: `127.0.0.1:${sandboxPort}`, prover: `127.0.0.1:${proverPort}`, ledgerMs: 50 },
    { POOL_PROXY_PORT: String(proxyPort) },
  );
  t.teardown(() => void s.child.kill('SIGKILL'));
  await s.waitFor(/"msg":"ready\."/, 8 * 60_000);

  t.regex(s.output(), new RegExp(`sandbox ledger\\s+http://127\\.0\\.0\\.1:${sandboxPort}/rpc`));
  t.regex(s.output(), new RegExp(`prover daemon\\s+127\\.0\\.0\\.1:${proverPort}`));
  t.regex(s.output(), new RegExp(`proxy\\s+http://127\\.0\\.0\\.1:${proxyPort}`));
  t.regex(s.output(), new RegExp(`wallet page\\s+http://127\\.0\\.0\\.1:${proxyPort}/`));

  const health = await (await fetch(`http://127.0.0.1:${proxyPort}/health`)).json();
  t.is(health.status, 'healthy');
  const info = await (await fetch(`http://127.0.0.1:${sandboxPort}/sandbox/info`)).json();
  const poolInfo = await (await fetch(`http://127.0.0.1:${proxyPort}/api/pool/info`)).json();
  t.is(poolInfo.contracts.pool, info.contracts.pool);
  t.is(poolInfo.operator, info.accounts.operator);

  // The operator of a new sandbox holds test USDC, so operator-signed deposits can work at once.
  const server = new rpc.Server(`http://127.0.0.1:${sandboxPort}/rpc`, { allowHttp: true });
  const source = await server.getAccount(info.accounts.operator);
  const call = new TransactionBuilder(source, { fee: '100', networkPassphrase: info.networkPassphrase })
    .addOperation(
      new Contract(info.contracts.token).call('balance', new Address(info.accounts.operator).toScVal()),
    )
    .setTimeout(30)
    .build();
  const sim = await server.simulateTransaction(call);
  t.true(rpc.Api.isSimulationSuccess(sim));
  const balance = scValToNative((sim as rpc.Api.SimulateTransactionSuccessResponse).result!.retval) as bigint;
  t.is(balance, 10_000n * 10_000_000n);
  t.true(existsSync(join(dataDir, 'master.key')), 'the master key file lives in the data dir');
  t.true(existsSync(join(dataDir, 'sandbox')), 'the sandbox ledger persists in the data dir');
  const tokenFile = join(dataDir, 'operator.token');
  t.is(statSync(tokenFile).mode & 0o777, 0o600, 'the operator token, readable by its owner only');
  t.regex(s.output(), new RegExp(`operator token\\s+${tokenFile}`));
  t.is((await fetch(`http://127.0.0.1:${proxyPort}/api/operator/books`)).status, 401, 'not without it');

  // The stdio MCP server, given the same data directory as start, acts as the operator: its deposit is paid by
  // the operator and lands.
  const mcp = new Client({ name: 'start-test', version: '1' });
  await mcp.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [
        CLI,
        'mcp',
        '--proxy',
        `http://127.0.0.1:${proxyPort}`,
        '--data-dir',
        dataDir,
        '--agent-id',
        'a1',
      ],
      stderr: 'pipe',
    }),
  );
  t.teardown(() => mcp.close());
  const deposited = await mcp.callTool({ name: 'pool_deposit', arguments: { amount: '1' } }, undefined, {
    timeout: 120_000,
  });
  t.falsy(deposited.isError, JSON.stringify(deposited.content));
  t.like(deposited.structuredContent, { status: 'confirmed' });

  s.child.kill('SIGTERM');
  t.is(await s.exited, 0);

  // `store recover` on this data directory uses the embedded ledger it holds (no POOL_PROXY_RPC_URL, nothing
  // started by hand), and the next start rebuilds the agent's balance.
  const recover = runCli(['store', 'recover', '--data-dir', dataDir], { POOL_PROXY_RPC_URL: undefined });
  t.is(await recover.exited, 0, recover.output());
  t.regex(recover.output(), /opened the embedded ledger in .*sandbox for the check/);
  t.regex(recover.output(), /the master key opens this proxy’s notes on chain/);
  const again = runStart(
    { dataDir, sandbox: `127.0.0.1:${sandboxPort}`, prover: `127.0.0.1:${proverPort}`, ledgerMs: 50 },
    { POOL_PROXY_PORT: String(proxyPort) },
  );
  t.teardown(() => void again.child.kill('SIGKILL'));
  await again.waitFor(/"msg":"ready\."/, 8 * 60_000);
  const token = readFileSync(tokenFile, 'utf8').trim();
  const rebuilt = await fetch(`http://127.0.0.1:${proxyPort}/api/balance/a1`, {
    headers: { authorization: `Bearer ${token}` },
  });
  t.like(await rebuilt.json(), { agentId: 'a1', balance: '1.0000000' });
  again.child.kill('SIGTERM');
  t.is(await again.exited, 0);
});

test('pool-proxy start refuses a bad address and exits non-zero with a clear message', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'pool-proxy-start-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const s = runCli(['start', '--data-dir', dataDir, '--sandbox', 'not-an-address'], {});
  t.is(await s.exited, 1);
  t.regex(s.output(), /--sandbox must be HOST:PORT, got not-an-address/);
  const bad = runCli(['start', '--data-dir', dataDir, '--ledger-ms', 'soon', '--sandbox', '127.0.0.1:0'], {});
  t.is(await bad.exited, 1);
  t.regex(bad.output(), /--ledger-ms must be a positive integer/);
  for (const n of ['12', '2', '2097152', 'big']) {
    const capacity = runCli(
      ['start', '--data-dir', dataDir, '--tree-capacity', n, '--sandbox', '127.0.0.1:0'],
      {},
    );
    t.is(await capacity.exited, 1);
    t.regex(capacity.output(), /--tree-capacity must be a power of two from 4 to 1048576/);
  }
});
