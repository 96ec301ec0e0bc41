// Where the pool lives: contract ids and accounts, from configuration or, on the embedded sandbox,
// from its GET /sandbox/info. Secrets always come from configuration (the sandbox never serves them).
import { Keypair, StrKey } from '#stellar-sdk';
import { ConfigError, type LedgerConfig } from '../config.ts';

export interface Deployment {
  network: string;
  networkPassphrase: string;
  rpcUrl: string;
  contracts: { pool: string; token: string; aspMembership: string; aspNonMembership: string };
  operator: Keypair;
  aspAdmin: Keypair;
  poolWallet: string;
  /** The embedded sandbox's friendbot (`GET …?addr=G…&usdc=N`); empty on a real network. */
  friendbotUrl: string;
}

interface SandboxInfo {
  contracts: { token: string; pool: string; asp_membership: string; asp_non_membership: string };
  accounts: { poolWallet: string };
}

function keypair(secret: string, name: string): Keypair {
  if (!StrKey.isValidEd25519SecretSeed(secret))
    throw new ConfigError(`${name} must be a Stellar secret seed (S…)`);
  return Keypair.fromSecret(secret);
}

/** The sandbox's friendbot, next to its /sandbox/info; empty when the ledger is not the embedded sandbox. */
export function sandboxFriendbotUrl(ledger: LedgerConfig): string {
  return ledger.sandboxInfoUrl === '' ? '' : new URL('/friendbot', ledger.sandboxInfoUrl).href;
}

/** The pool's contract ids and pool wallet: from configuration, else from the sandbox's /sandbox/info. */
export async function resolveContracts(
  ledger: LedgerConfig,
): Promise<{ contracts: Deployment['contracts']; poolWallet: string }> {
  let contracts = {
    pool: ledger.poolContractId,
    token: ledger.tokenContractId,
    aspMembership: ledger.aspMembershipContractId,
    aspNonMembership: ledger.aspNonMembershipContractId,
  };
  let poolWallet = ledger.poolWallet;
  if (Object.values(contracts).some((c) => c === '') && ledger.sandboxInfoUrl !== '') {
    const response = await fetch(ledger.sandboxInfoUrl);
    if (!response.ok) throw new Error(`GET ${ledger.sandboxInfoUrl} answered ${response.status}`);
    const info = (await response.json()) as SandboxInfo;
    contracts = {
      pool: contracts.pool || info.contracts.pool,
      token: contracts.token || info.contracts.token,
      aspMembership: contracts.aspMembership || info.contracts.asp_membership,
      aspNonMembership: contracts.aspNonMembership || info.contracts.asp_non_membership,
    };
    poolWallet ||= info.accounts.poolWallet;
  }
  for (const [name, id] of Object.entries(contracts)) {
    if (!StrKey.isValidContract(id))
      throw new ConfigError(`contract id for ${name} is missing or invalid (set it in the environment)`);
  }
  return { contracts, poolWallet };
}

/**
 * The deployment's own accounts and contracts, each with what it is. A payment to one of them would move USDC
 * outside the books (into the pool contract outside any note, back to the pool wallet, to the operator…), so
 * no payment may name one as its payee. The float account has no address of its own: its notes are in the
 * pool contract.
 */
export function ownAddresses(d: Deployment): ReadonlyMap<string, string> {
  return new Map([
    [d.contracts.pool, 'the pool contract (it holds the agents’ notes and the float account)'],
    [d.contracts.token, 'the token contract'],
    [d.contracts.aspMembership, 'the ASP membership contract'],
    [d.contracts.aspNonMembership, 'the ASP non-membership contract'],
    [d.operator.publicKey(), 'the operator account'],
    [d.aspAdmin.publicKey(), 'the ASP admin account'],
    [d.poolWallet, 'the pool wallet'],
  ]);
}

export async function resolveDeployment(ledger: LedgerConfig): Promise<Deployment> {
  const { contracts, poolWallet } = await resolveContracts(ledger);
  return {
    network: ledger.network,
    networkPassphrase: ledger.networkPassphrase,
    rpcUrl: ledger.rpcUrl,
    contracts,
    operator: keypair(ledger.operatorSecret, 'POOL_PROXY_OPERATOR_SECRET'),
    aspAdmin: keypair(ledger.aspAdminSecret || ledger.operatorSecret, 'POOL_PROXY_ASP_ADMIN_SECRET'),
    poolWallet,
    friendbotUrl: sandboxFriendbotUrl(ledger),
  };
}
