import type { Command } from 'commander';
import { parsePassphrase, parseRpcUrl, parseTreeCapacity, TREE_CAPACITY_HELP } from '../flags.ts';

// `pool-proxy contracts deploy`: uploads the pool's four compiled contracts to a network through its Soroban
// RPC, creates and initialises them (the same code the sandbox's genesis runs) and prints the proxy's
// configuration. The admin's secret comes from the environment (POOL_PROXY_ADMIN_SECRET), never a flag.
export function registerContracts(program: Command): void {
  const contracts = program
    .command('contracts')
    .description('deploy the pool contracts to a Stellar network');
  contracts
    .command('deploy')
    .description(
      'upload the compiled contracts (build/contracts), create and initialise them, print the proxy configuration',
    )
    .requiredOption(
      '--rpc-url <url>',
      'Soroban RPC of the network (e.g. https://soroban-testnet.stellar.org)',
    )
    .requiredOption('--network-passphrase <text>', "the network's passphrase")
    .requiredOption('--pool-wallet <G…>', "the proxy's pool wallet: the pool's payout wallet")
    .option('--token <C…>', 'an existing token contract (USDC: its Stellar Asset Contract)')
    .option(
      '--asset <CODE:ISSUER>',
      'a classic asset whose Stellar Asset Contract to create unless it exists',
    )
    .option('--vkey <path>', 'verification_key.json of the circuit (default: build/circuits/policy_tx_2_2)')
    .option('--wasm-dir <dir>', 'where the compiled contracts are (default: build/contracts)')
    .option(
      '--salt <text>',
      'names the deployment: the same admin and salt give the same ids',
      'privacy-pool',
    )
    .option('--tree-capacity <n>', TREE_CAPACITY_HELP, String(2 ** 20))
    .option(
      '--change-payout-wallet',
      'when the pool exists already with another payout wallet, re-point it to --pool-wallet (refused otherwise)',
    )
    .option('--json', 'print the result as JSON instead of environment lines')
    .action((opts: DeployFlags) =>
      runDeploy(opts).catch((error: Error) => {
        console.error(`pool-proxy contracts deploy: ${error.message}`);
        process.exit(2);
      }),
    );
}

interface DeployFlags {
  rpcUrl: string;
  networkPassphrase: string;
  poolWallet: string;
  token?: string;
  asset?: string;
  vkey?: string;
  wasmDir?: string;
  salt: string;
  treeCapacity: string;
  changePayoutWallet?: boolean;
  json?: boolean;
}

async function runDeploy(opts: DeployFlags): Promise<void> {
  const { Keypair, rpc, StrKey } = await import('#stellar-sdk');
  const rpcUrl = parseRpcUrl(opts.rpcUrl);
  const networkPassphrase = parsePassphrase(opts.networkPassphrase);
  if (!StrKey.isValidEd25519PublicKey(opts.poolWallet))
    throw new Error(`--pool-wallet must be an account address (G…), got ${opts.poolWallet}`);
  if ((opts.token === undefined) === (opts.asset === undefined))
    throw new Error('give exactly one of --token C… (an existing token) or --asset CODE:ISSUER');
  let token: { contractId: string } | { code: string; issuer: string };
  if (opts.token !== undefined) {
    if (!StrKey.isValidContract(opts.token))
      throw new Error(`--token must be a contract id (C…), got ${opts.token}`);
    token = { contractId: opts.token };
  } else {
    const [code, issuer, extra] = (opts.asset as string).split(':');
    if (
      !code ||
      !/^[A-Za-z0-9]{1,12}$/.test(code) ||
      !issuer ||
      !StrKey.isValidEd25519PublicKey(issuer) ||
      extra
    )
      throw new Error(`--asset must be CODE:ISSUER (e.g. USDC:G…), got ${opts.asset}`);
    token = { code, issuer };
  }
  if (!/^[\x20-\x7e]{1,64}$/.test(opts.salt)) throw new Error('--salt must be 1 to 64 printable characters');
  const treeCapacity = parseTreeCapacity(opts.treeCapacity);
  const secret = process.env.POOL_PROXY_ADMIN_SECRET ?? '';
  if (!StrKey.isValidEd25519SecretSeed(secret))
    throw new Error(
      'set POOL_PROXY_ADMIN_SECRET to the secret seed (S…) of the funded account that deploys and administers the pool',
    );

  const [
    { DEFAULT_POOL_PARAMETERS, deployPool },
    { readContractWasms },
    { loadVerificationKey },
    { x402Network },
  ] = await Promise.all([
    import('../../deploy/pool-deployment.ts'),
    import('../../deploy/contract-wasm.ts'),
    import('../../deploy/verification-key.ts'),
    import('../../ledger/networks.ts'),
  ]);
  const verificationKey = loadVerificationKey(opts.vkey);
  const wasms = readContractWasms(opts.wasmDir);
  const admin = Keypair.fromSecret(secret);
  const server = new rpc.Server(rpcUrl, { allowHttp: rpcUrl.startsWith('http:') });
  const passphraseOnRpc = (await server.getNetwork()).passphrase;
  if (passphraseOnRpc !== networkPassphrase)
    throw new Error(`the RPC serves the network "${passphraseOnRpc}", not "${networkPassphrase}"`);
  const deployment = await deployPool({
    ledger: { server, networkPassphrase },
    admin,
    poolWallet: opts.poolWallet,
    token,
    verificationKey,
    wasms,
    parameters: { ...DEFAULT_POOL_PARAMETERS, treeCapacity },
    salt: opts.salt,
    changePayoutWallet: opts.changePayoutWallet === true,
    log: (line) => console.error(line),
  });
  if (opts.json) {
    console.log(
      JSON.stringify(
        { rpcUrl, networkPassphrase, admin: admin.publicKey(), poolWallet: opts.poolWallet, ...deployment },
        null,
        2,
      ),
    );
    return;
  }
  const c = deployment.contracts;
  console.log(
    [
      '# the proxy on this deployment (docs/DEPLOYMENT.md): set these, plus POOL_PROXY_OPERATOR_SECRET,',
      '# POOL_PROXY_POOL_WALLET_SECRET and POOL_PROXY_ASP_ADMIN_SECRET (the admin that deployed: it inserts',
      '# agents into the allowlist and authorises payouts)',
      `POOL_PROXY_RPC_URL=${rpcUrl}`,
      `POOL_PROXY_NETWORK_PASSPHRASE='${networkPassphrase}'`,
      `POOL_PROXY_NETWORK=${x402Network(networkPassphrase)}`,
      `POOL_PROXY_POOL_CONTRACT=${c.pool}`,
      `POOL_PROXY_TOKEN_CONTRACT=${c.token}`,
      `POOL_PROXY_ASP_MEMBERSHIP_CONTRACT=${c.asp_membership}`,
      `POOL_PROXY_ASP_NON_MEMBERSHIP_CONTRACT=${c.asp_non_membership}`,
      `POOL_PROXY_POOL_WALLET=${opts.poolWallet}`,
      `# verifier: ${c.verifier}`,
    ].join('\n'),
  );
}
