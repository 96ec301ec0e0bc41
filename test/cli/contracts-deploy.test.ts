// `pool-proxy contracts deploy` against a running sandbox, as an operator deploys to testnet: a fresh admin
// (funded by friendbot) uploads the compiled contracts, creates a new asset's Stellar Asset Contract and the
// four contracts through the RPC; each module on the ledger is byte for byte the one `npm run build` made,
// the pool knows its payout wallet and answers for its tree, running it again finishes nothing twice, running
// it with another pool wallet or token is refused naming what differs (the wallet re-pointed only with
// --change-payout-wallet), and bad flags or a missing secret stop it with one line naming the problem.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Asset, Contract, Keypair, rpc, scValToNative, TransactionBuilder } from '#stellar-sdk';
import test from 'ava';
import { DEFAULT_WASM_DIR } from '../../src/deploy/contract-wasm.ts';
import { type PoolSandbox, startPoolSandbox } from '../../src/deploy/sandbox-network.ts';
import { STANDALONE_PASSPHRASE } from '../../src/ledger/networks.ts';
import { runCli } from '../helpers/cli.ts';

let sandbox: PoolSandbox;
let server: rpc.Server;

test.before(async () => {
  sandbox = await startPoolSandbox({ port: 0, ledgerMs: 100 });
  server = new rpc.Server(sandbox.rpcUrl, { allowHttp: true });
});
test.after.always(() => sandbox?.close());

async function funded(): Promise<Keypair> {
  const kp = Keypair.random();
  const r = await fetch(`${sandbox.url}/friendbot?addr=${kp.publicKey()}`);
  if (!r.ok) throw new Error(`friendbot answered ${r.status}`);
  return kp;
}

async function deploy(args: string[], secret: string | undefined) {
  const run = runCli(['contracts', 'deploy', ...args], { POOL_PROXY_ADMIN_SECRET: secret });
  const code = await run.exited;
  return { code, stdout: run.stdout(), stderr: run.stderr() };
}

async function view(contractId: string, fn: string, source: string): Promise<unknown> {
  const account = await server.getAccount(source);
  const tx = new TransactionBuilder(account, { fee: '100', networkPassphrase: STANDALONE_PASSPHRASE })
    .addOperation(new Contract(contractId).call(fn))
    .setTimeout(30)
    .build();
  const sim = await server.simulateTransaction(tx);
  if (!rpc.Api.isSimulationSuccess(sim)) throw new Error(`${fn}: ${JSON.stringify(sim)}`);
  return scValToNative(sim.result!.retval);
}

test.serial('deploys the compiled contracts through the RPC, and a second run changes nothing', async (t) => {
  const admin = await funded();
  const poolWallet = await funded();
  const flags = [
    '--rpc-url',
    sandbox.rpcUrl,
    '--network-passphrase',
    STANDALONE_PASSPHRASE,
    '--asset',
    `TUSD:${admin.publicKey()}`,
    '--pool-wallet',
    poolWallet.publicKey(),
    '--salt',
    'deploy-test',
    '--tree-capacity',
    '16',
    '--json',
  ];
  const first = await deploy(flags, admin.secret());
  t.is(first.code, 0, first.stderr);
  const out = JSON.parse(first.stdout) as { contracts: Record<string, string>; admin: string };
  t.is(out.admin, admin.publicKey());
  t.is(out.contracts.token, new Asset('TUSD', admin.publicKey()).contractId(STANDALONE_PASSPHRASE));
  for (const name of ['verifier', 'pool', 'asp_membership', 'asp_non_membership']) {
    const onLedger = await server.getContractWasmByContractId(out.contracts[name] as string);
    const built = readFileSync(join(DEFAULT_WASM_DIR, `${name}.wasm`));
    t.true(
      Buffer.from(onLedger).equals(built),
      `${name}: the module on the ledger is the one npm run build made`,
    );
    t.notDeepEqual(out.contracts[name], sandbox.info.contracts[name as 'pool'], `${name}: a new instance`);
  }
  t.is(
    await view(out.contracts.pool as string, 'get_payout_wallet', admin.publicKey()),
    poolWallet.publicKey(),
  );
  t.is(await view(out.contracts.pool as string, 'get_next_index', admin.publicKey()), 0);
  t.is(await view(out.contracts.pool as string, 'get_tree_capacity', admin.publicKey()), 16);
  t.is(await view(out.contracts.pool as string, 'get_current_tree', admin.publicKey()), 0);
  t.is(await view(out.contracts.asp_membership as string, 'get_admin', admin.publicKey()), admin.publicKey());

  // everything exists already: nothing is uploaded or created again, the same ids come back
  const second = await deploy(flags, admin.secret());
  t.is(second.code, 0, second.stderr);
  t.deepEqual(JSON.parse(second.stdout).contracts, out.contracts);
  t.regex(second.stderr, /pool: .* already exists/);
  t.notRegex(second.stderr, /uploaded module/);

  // another pool wallet: refused, naming both, the live pool's payout unchanged; re-pointed only when told to
  const other = await funded();
  const walletAt = flags.indexOf('--pool-wallet') + 1;
  const moved = flags.map((f, i) => (i === walletAt ? other.publicKey() : f));
  const refusedRun = await deploy(moved, admin.secret());
  t.is(refusedRun.code, 2, refusedRun.stderr);
  t.regex(
    refusedRun.stderr.trim().split('\n').at(-1) ?? '',
    new RegExp(
      `already pays out to ${poolWallet.publicKey()}, not ${other.publicKey()}.*--change-payout-wallet`,
    ),
  );
  const payout = () => view(out.contracts.pool as string, 'get_payout_wallet', admin.publicKey());
  t.is(await payout(), poolWallet.publicKey(), 'the payout did not move');
  // a constructor setting cannot change at all, told or not
  const assetAt = flags.indexOf('--asset') + 1;
  const otherToken = flags.map((f, i) => (i === assetAt ? `TUSE:${admin.publicKey()}` : f));
  const tokenRun = await deploy([...otherToken, '--change-payout-wallet'], admin.secret());
  t.is(tokenRun.code, 2, tokenRun.stderr);
  t.regex(
    tokenRun.stderr,
    /already exists with other settings \(Token: C\w+ on the ledger, C\w+ asked\).*another --salt/,
  );
  t.is(await payout(), poolWallet.publicKey());
  const repointed = await deploy([...moved, '--change-payout-wallet'], admin.secret());
  t.is(repointed.code, 0, repointed.stderr);
  t.is(await payout(), other.publicKey(), 're-pointed when told to');
  flags[walletAt] = other.publicKey();

  // without --json: the proxy's environment
  const lines = await deploy(flags.slice(0, -1), admin.secret());
  t.is(lines.code, 0, lines.stderr);
  t.regex(lines.stdout, new RegExp(`^POOL_PROXY_POOL_CONTRACT=${out.contracts.pool}$`, 'm'));
  t.regex(lines.stdout, /^POOL_PROXY_NETWORK=stellar:local$/m);
});

test('refuses bad flags and a missing or wrong admin secret, naming the problem', async (t) => {
  const admin = Keypair.random();
  const base = [
    '--rpc-url',
    sandbox.rpcUrl,
    '--network-passphrase',
    STANDALONE_PASSPHRASE,
    '--pool-wallet',
    admin.publicKey(),
    '--token',
    sandbox.info.contracts.token,
  ];
  const cases: [string[], string | undefined, RegExp][] = [
    [base, undefined, /POOL_PROXY_ADMIN_SECRET/],
    [base, 'SNOTASECRET', /POOL_PROXY_ADMIN_SECRET/],
    [[...base.slice(0, 6), '--token', 'CNOTACONTRACT'], admin.secret(), /--token must be a contract id/],
    [[...base, '--asset', `USDC:${admin.publicKey()}`], admin.secret(), /exactly one of --token/],
    [[...base.slice(0, 6), '--asset', 'USDC'], admin.secret(), /--asset must be CODE:ISSUER/],
    [[...base.slice(0, 4), '--pool-wallet', 'GNOPE', ...base.slice(6)], admin.secret(), /--pool-wallet/],
    [['--rpc-url', 'ftp://x', ...base.slice(2)], admin.secret(), /--rpc-url must be an http\(s\) URL/],
    ...['6', '2', '0', '-8', '2097152', '1e3', 'many'].map((n): [string[], string, RegExp] => [
      [...base, '--tree-capacity', n],
      admin.secret(),
      /--tree-capacity must be a power of two from 4 to 1048576/,
    ]),
    [
      [base[0] as string, base[1] as string, '--network-passphrase', 'Other ; net', ...base.slice(4)],
      admin.secret(),
      /serves the network/,
    ],
    // a valid secret of an account that does not exist: the RPC has no account to send from
    [base, admin.secret(), /not found|does not exist|Account not found/i],
  ];
  const runs = await Promise.all(cases.map(([args, secret]) => deploy(args, secret)));
  for (const [i, [args, , message]] of cases.entries()) {
    const r = runs[i] as Awaited<ReturnType<typeof deploy>>;
    t.is(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    // the refusal is one line, the last (steps already on the ledger are logged before it)
    const last = r.stderr.trim().split('\n').at(-1) ?? '';
    t.regex(last, /^pool-proxy contracts deploy: /);
    t.regex(last, message);
  }
});
