// A payment waiting for its owner's approval survives kill -9: `pool-proxy serve` (LevelDB, against a sandbox,
// a prover daemon and the local x402 pair that keep running) is killed with SIGKILL while a payment above the
// agent's approval threshold waits; after the restart it still waits (reconciliation did not release it) with
// its price still reserved, nothing was paid, and once approved it is paid exactly once; killed and restarted
// again, it is not paid a second time.
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ApprovalList, Balance, PaymentResult } from '../../src/api/types.ts';
import type { ProverDaemon } from '../../src/prover/daemon/server.ts';
import type { CliRun } from '../helpers/cli.ts';
import { jsonOf, rawRequest } from './helpers/http.ts';
import { type ServeRig, serveProxy, startRigProver, startServeRig, usdcOf } from './helpers/serve-rig.ts';
import { operatorHeadersFrom } from './helpers/proxy.ts';

const AGENT = 'waiting-agent';
const PRICE = 100_000n; // the demo service's 0.01 USDC

let daemon: ProverDaemon | undefined;
let rig: ServeRig | undefined;
let dataDir = '';
const runs: CliRun[] = [];

test.after.always(async () => {
  for (const run of runs) run.child.kill('SIGKILL');
  await rig?.close();
  await daemon?.stop({ force: true });
  if (dataDir !== '') rmSync(dataDir, { recursive: true, force: true });
});

test('kill -9 while a payment waits for approval: still waiting after the restart, then paid once', async (t) => {
  daemon = await startRigProver();
  rig = await startServeRig({ prover: daemon.address, poolWalletUsdc: 100, demoMaxTimeoutSeconds: 30 });
  dataDir = mkdtempSync(join(tmpdir(), 'pool-proxy-approvals-'));
  const start = () =>
    serveProxy(
      dataDir,
      {
        ...rig!.env,
        POOL_PROXY_INDEXER_POLL_MS: '100',
        POOL_PROXY_BATCH_WINDOW_MS: '200',
        POOL_PROXY_RECONCILE_INTERVAL_MS: '500',
        POOL_PROXY_SETTLE_INTERVAL_MS: '86400000',
      },
      runs,
    );
  const kill = async (run: CliRun) => {
    run.child.kill('SIGKILL');
    await run.exited;
  };
  let { run, url } = await start();
  const headers = () => ({
    'content-type': 'application/json',
    ...operatorHeadersFrom(join(dataDir, 'operator.token')),
  });
  const call = (method: string, path: string, body?: unknown) =>
    rawRequest(`${url}${path}`, {
      method,
      headers: headers(),
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
  const balance = async () =>
    BigInt(jsonOf<Balance>(await call('GET', `/api/balance/${AGENT}`)).balance.replace('.', ''));
  const paidToService = () => usdcOf(rig!.sandbox, rig!.x402.demoPayTo);

  t.is((await call('POST', '/api/deposit', { agentId: AGENT, amount: '1' })).status, 200);
  t.is((await call('PUT', `/api/agents/${AGENT}/policy`, { approvalThreshold: '0.005' })).status, 200);
  const before = await balance();
  const service = await paidToService();
  const asked = await call('POST', '/api/pay', {
    agentId: AGENT,
    serviceUrl: rig.x402.demo.quoteUrl,
    method: 'GET',
  });
  t.is(asked.status, 202, JSON.stringify(asked.json));
  const id = jsonOf<PaymentResult>(asked).paymentId;
  await kill(run);

  ({ run, url } = await start());
  t.like((await call('GET', `/api/payments/${id}`)).json, { paymentStatus: 'awaiting_approval' });
  t.true(jsonOf<ApprovalList>(await call('GET', '/api/approvals')).approvals.some((a) => a.paymentId === id));
  t.is(await balance(), before - PRICE, 'still reserved');
  t.is(await paidToService(), service, 'nothing paid while it waits');

  t.is((await call('POST', `/api/approvals/${id}/approve`)).status, 200);
  let status = 'pending';
  for (let i = 0; i < 300 && status === 'pending'; i++) {
    await new Promise((r) => setTimeout(r, 200));
    status = jsonOf<PaymentResult>(await call('GET', `/api/payments/${id}`)).paymentStatus;
  }
  t.is(status, 'confirmed');
  t.is(await paidToService(), service + PRICE, 'paid exactly once');

  await kill(run);
  ({ run, url } = await start());
  t.is(jsonOf<PaymentResult>(await call('GET', `/api/payments/${id}`)).paymentStatus, 'confirmed');
  t.is((await call('POST', `/api/approvals/${id}/approve`)).status, 409);
  t.is(await balance(), before - PRICE);
  t.is(await paidToService(), service + PRICE, 'not paid again after the restart');
  run.child.kill('SIGTERM');
  await run.exited;
});
