// Deploys the pool's contracts on any Stellar network through its Soroban RPC: uploads the four WebAssembly
// modules, creates the USDC Stellar Asset Contract if asked to, creates and initialises the verifier (with the
// circuit's verification key), the ASP membership and non-membership contracts and the pool, and registers the
// pool wallet as the payout wallet. Contract ids derive from the admin and a salt, so every step first looks
// whether its result is already on the ledger: a deployment that stopped half-way is finished by running it
// again. A pool that exists already is compared with what was asked: other constructor settings are refused
// (they cannot change), another payout wallet unless `changePayoutWallet`. The sandbox's genesis runs this
// same code against its own RPC.
import {
  Address,
  Asset,
  hash,
  type Keypair,
  nativeToScVal,
  Operation,
  scValToNative,
  StrKey,
  xdr,
} from '#stellar-sdk';
import { type ContractName, type ContractWasm, CONTRACT_NAMES } from './contract-wasm.ts';
import type { LedgerAccess } from '../ledger/ledger-access.ts';
import { sendOperation } from './transactions.ts';
import { type SnarkjsVerificationKey, verificationKeyToScVal } from './verification-key.ts';

/** The pool's parameters (the sandbox's defaults are the circuit's: depth 20 trees, policy AB). */
export interface PoolParameters {
  /** depth of the pool's commitment trees (the circuit's: 20) */
  poolLevels: number;
  /**
   * leaves one commitment tree takes before the pool opens the next (a power of two in 4..2^poolLevels; default
   * 2^poolLevels, 524,288 transactions a tree; small ones let tests fill trees in seconds)
   */
  treeCapacity: number;
  /** depth of the ASP membership tree (the circuit's: 20) */
  aspLevels: number;
  /** largest single deposit, in stroops */
  maxDeposit: bigint;
  /** 1 = allowlist, 2 = blocklist, 3 = both (the circuit proves both) */
  policyFlags: number;
}

export const DEFAULT_POOL_PARAMETERS: PoolParameters = {
  poolLevels: 20,
  treeCapacity: 2 ** 20,
  aspLevels: 20,
  maxDeposit: 1_000_000n * 10_000_000n,
  policyFlags: 3,
};

export interface PoolDeploymentOptions {
  ledger: LedgerAccess;
  /** uploads and creates everything, and administers the pool and the ASP contracts */
  admin: Keypair;
  /** the pool's payout wallet (the proxy's pool wallet: it pays x402 services) */
  poolWallet: string;
  /** an existing token contract (USDC's on testnet), or a classic asset whose Stellar Asset Contract to create */
  token: { contractId: string } | { code: string; issuer: string };
  verificationKey: SnarkjsVerificationKey;
  wasms: Record<ContractName, ContractWasm>;
  parameters?: PoolParameters;
  /** names the deployment: the same admin and salt give the same contract ids (default `privacy-pool`) */
  salt?: string;
  /** an existing pool's payout wallet may be re-pointed to `poolWallet` (else a different one is refused) */
  changePayoutWallet?: boolean;
  log?: (line: string) => void;
}

export interface PoolDeployment {
  contracts: {
    token: string;
    pool: string;
    verifier: string;
    asp_membership: string;
    asp_non_membership: string;
  };
  /** hex SHA-256 of each uploaded module */
  wasmHashes: Record<ContractName, string>;
}

/** The id stellar-core gives a contract created by `deployer` with `salt` (HashIdPreimage CONTRACT_ID). */
export function contractIdFor(networkPassphrase: string, deployer: string, salt: Uint8Array): string {
  const preimage = xdr.HashIdPreimage.envelopeTypeContractId(
    new xdr.HashIdPreimageContractId({
      networkId: hash(Buffer.from(networkPassphrase)),
      contractIdPreimage: xdr.ContractIdPreimage.contractIdPreimageFromAddress(
        new xdr.ContractIdPreimageFromAddress({ address: new Address(deployer).toScAddress(), salt }),
      ),
    }),
  );
  return StrKey.encodeContract(Buffer.from(hash(preimage.toXdr())));
}

const codeKey = (wasmHash: Buffer) =>
  xdr.LedgerKey.contractCode(new xdr.LedgerKeyContractCode({ hash: wasmHash }));
const instanceKey = (contractId: string) =>
  xdr.LedgerKey.contractData(
    new xdr.LedgerKeyContractData({
      contract: new Address(contractId).toScAddress(),
      key: xdr.ScVal.scvLedgerKeyContractInstance(),
      durability: xdr.ContractDataDurability.persistent,
    }),
  );

const addr = (id: string) => new Address(id).toScVal();
const u32 = (n: number) => xdr.ScVal.scvU32(n);
const u256 = (n: bigint) => nativeToScVal(n, { type: 'u256' });

export async function deployPool(opts: PoolDeploymentOptions): Promise<PoolDeployment> {
  const { ledger, admin } = opts;
  const params = opts.parameters ?? DEFAULT_POOL_PARAMETERS;
  const log = opts.log ?? (() => {});
  const deployer = admin.publicKey();
  const salt = opts.salt ?? 'privacy-pool';
  const exists = async (key: xdr.LedgerKey) => (await ledger.server.getLedgerEntries(key)).entries.length > 0;

  for (const name of CONTRACT_NAMES) {
    const { wasm, hash: wasmHash } = opts.wasms[name];
    if (await exists(codeKey(wasmHash))) {
      log(`${name}: module ${wasmHash.toString('hex')} already uploaded`);
      continue;
    }
    await sendOperation(ledger, `upload ${name}`, admin, Operation.uploadContractWasm({ wasm }));
    log(`${name}: uploaded module ${wasmHash.toString('hex')} (${wasm.length} bytes)`);
  }

  let token: string;
  if ('contractId' in opts.token) {
    token = opts.token.contractId;
    if (!(await exists(instanceKey(token)))) throw new Error(`token contract ${token} does not exist`);
  } else {
    const asset = new Asset(opts.token.code, opts.token.issuer);
    token = asset.contractId(ledger.networkPassphrase);
    if (!(await exists(instanceKey(token)))) {
      await sendOperation(ledger, 'create the token', admin, Operation.createStellarAssetContract({ asset }));
      log(`token: created the Stellar Asset Contract of ${asset.toString()}: ${token}`);
    }
  }

  const create = async (name: ContractName, args: xdr.ScVal[]): Promise<string> => {
    const contractSalt = hash(Buffer.from(`${salt}/${name}`));
    const id = contractIdFor(ledger.networkPassphrase, deployer, contractSalt);
    if (await exists(instanceKey(id))) {
      log(`${name}: ${id} already exists`);
      return id;
    }
    await sendOperation(
      ledger,
      `create ${name}`,
      admin,
      Operation.createCustomContract({
        address: new Address(deployer),
        wasmHash: opts.wasms[name].hash,
        salt: contractSalt,
        constructorArgs: args,
      }),
    );
    log(`${name}: created ${id}`);
    return id;
  };

  const verifier = await create('verifier', [verificationKeyToScVal(opts.verificationKey)]);
  const membership = await create('asp_membership', [addr(deployer), u32(params.aspLevels)]);
  const nonMembership = await create('asp_non_membership', [addr(deployer)]);
  const poolSettings: Array<[string, xdr.ScVal]> = [
    ['Token', addr(token)],
    ['Verifier', addr(verifier)],
    ['AspMembership', addr(membership)],
    ['AspNonMembership', addr(nonMembership)],
    ['MaximumDepositAmount', u256(params.maxDeposit)],
    ['Levels', u32(params.poolLevels)],
    ['TreeCapacity', u32(params.treeCapacity)],
    ['PolicyFlags', u32(params.policyFlags)],
  ];
  const poolId = contractIdFor(ledger.networkPassphrase, deployer, hash(Buffer.from(`${salt}/pool`)));
  const existing = await instanceStorage(ledger, poolId);
  if (existing !== undefined) {
    // A pool's constructor settings never change; its payout wallet only when asked to.
    const differs = poolSettings.filter(([key, value]) => !sameScVal(existing.get(key), value));
    if (differs.length > 0)
      throw new Error(
        `the pool ${poolId} already exists with other settings (${differs
          .map(([key, value]) => `${key}: ${shown(existing.get(key))} on the ledger, ${shown(value)} asked`)
          .join('; ')}); they cannot change: deploy another pool with another --salt`,
      );
    const payout = existing.get('PayoutWallet');
    if (sameScVal(payout, addr(opts.poolWallet))) {
      log(`pool: ${poolId} already exists; payout wallet ${opts.poolWallet} already set`);
      return result(poolId);
    }
    if (payout !== undefined && opts.changePayoutWallet !== true)
      throw new Error(
        `the pool ${poolId} already pays out to ${shown(payout)}, not ${opts.poolWallet}: re-pointing it moves ` +
          'the payouts of the live pool to another wallet; run again with --change-payout-wallet if that is meant',
      );
  }
  const pool = await create('pool', [addr(deployer), ...poolSettings.map(([, value]) => value)]);
  await sendOperation(
    ledger,
    'set the payout wallet',
    admin,
    Operation.invokeContractFunction({
      contract: pool,
      function: 'set_payout_wallet',
      args: [addr(opts.poolWallet)],
    }),
  );
  log(`pool: payout wallet ${opts.poolWallet}`);
  return result(pool);

  function result(poolContract: string): PoolDeployment {
    return {
      contracts: {
        token,
        pool: poolContract,
        verifier,
        asp_membership: membership,
        asp_non_membership: nonMembership,
      },
      wasmHashes: Object.fromEntries(
        CONTRACT_NAMES.map((n) => [n, opts.wasms[n].hash.toString('hex')]),
      ) as Record<ContractName, string>,
    };
  }
}

/** A contract's instance storage by key (`DataKey::Token` → "Token"), or undefined when it does not exist. */
async function instanceStorage(
  ledger: LedgerAccess,
  contractId: string,
): Promise<Map<string, xdr.ScVal> | undefined> {
  const { entries } = await ledger.server.getLedgerEntries(instanceKey(contractId));
  const data = entries[0]?.val;
  if (data === undefined) return undefined;
  const value = data.type === 'contractData' ? data.contractData.val : undefined;
  const out = new Map<string, xdr.ScVal>();
  if (value?.type !== 'scvContractInstance') return out;
  for (const item of value.instance.storage ?? []) {
    const head = item.key.type === 'scvVec' && item.key.vec?.length === 1 ? item.key.vec[0] : undefined;
    if (head?.type === 'scvSymbol') out.set(head.sym.toString(), item.val);
  }
  return out;
}

const sameScVal = (a: xdr.ScVal | undefined, b: xdr.ScVal) =>
  a !== undefined && a.toXDR('base64') === b.toXDR('base64');

const shown = (value: xdr.ScVal | undefined) => (value === undefined ? 'none' : String(scValToNative(value)));
