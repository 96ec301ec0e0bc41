// Friendbot: `GET|POST /friendbot?addr=G…[&usdc=N]` creates the account from the network root account
// (10,000 XLM) and/or mints test USDC as the token admin. Both are recorded as signed transactions in the
// ledger, so `rpc.Server.requestAirdrop` / `fundAddress` (which read the transaction back) work unchanged.
import {
  Account,
  Contract,
  Keypair,
  Operation,
  SorobanDataBuilder,
  StrKey,
  TransactionBuilder,
  xdr,
} from '@stellar/stellar-sdk';
import { addr, i128 } from './contract-api.ts';
import { readInfo, readSecrets, STARTING_BALANCE } from './genesis.ts';
import type { Host } from './host.ts';
import { accountEntryData, accountKey, contractDataKey, instanceKey, keyId } from './keys.ts';
import { readAccount } from './admission.ts';
import type { JobTransaction, Ledger } from './ledger.ts';
import type { Overlay } from './overlay.ts';
import { BASE_FEE, invokeResult, resourceFeeFor, transactionMeta } from './xdr-records.ts';

/** Largest friendbot USDC grant, in whole USDC. */
const MAX_FRIENDBOT_USDC = 1_000_000_000n;

/** "12.5" → 125000000 stroops (7 decimals); undefined if not a valid non-negative amount. */
export function parseUsdc(text: string): bigint | undefined {
  const m = /^(\d{1,10})(?:\.(\d{1,7}))?$/.exec(text);
  if (!m) return undefined;
  return BigInt(m[1] as string) * 10_000_000n + BigInt((m[2] ?? '').padEnd(7, '0'));
}

function signed(builder: TransactionBuilder, signer: Keypair) {
  const tx = builder.setTimeout(0).build();
  tx.sign(signer);
  return { hash: Buffer.from(tx.hash()).toString('hex'), envelope: tx.toEnvelope() };
}

/** createAccount from the root account, applied to `overlay`. */
function createAccount(
  overlay: Overlay,
  passphrase: string,
  destination: string,
  sequence: number,
): JobTransaction {
  const root = Keypair.master(passphrase);
  const rootAccount = readAccount(overlay, root.publicKey());
  if (!rootAccount) throw new Error('the network root account is missing');
  const { hash, envelope } = signed(
    new TransactionBuilder(new Account(root.publicKey(), rootAccount.seqNum.toString()), {
      fee: BASE_FEE.toString(),
      networkPassphrase: passphrase,
    }).addOperation(
      Operation.createAccount({ destination, startingBalance: (STARTING_BALANCE / 10_000_000n).toString() }),
    ),
    root,
  );
  overlay.put(
    keyId(accountKey(root.publicKey())),
    accountEntryData(
      root.publicKey(),
      rootAccount.balance - STARTING_BALANCE - BASE_FEE,
      rootAccount.seqNum + 1n,
    ),
  );
  const created = accountEntryData(destination, STARTING_BALANCE, BigInt(sequence) << 32n);
  overlay.put(keyId(accountKey(destination)), created);
  const op = xdr.OperationResult.opInner(
    xdr.OperationResultTr.createAccount(xdr.CreateAccountResult.createAccountSuccess()),
  );
  const change = xdr.LedgerEntryChange.ledgerEntryCreated(
    new xdr.LedgerEntry({ lastModifiedLedgerSeq: sequence, data: created, ext: xdr.LedgerEntryExt.v0() }),
  );
  return {
    hash,
    envelope,
    result: new xdr.TransactionResult({
      feeCharged: BASE_FEE,
      result: xdr.TransactionResultResult.txSuccess([op]),
      ext: xdr.TransactionResultExt.v0(),
    }),
    meta: xdr.TransactionMeta.v4(
      new xdr.TransactionMetaV4({
        ext: xdr.ExtensionPoint.v0(),
        txChangesBefore: [],
        operations: [
          new xdr.OperationMetaV2({ ext: xdr.ExtensionPoint.v0(), changes: [change], events: [] }),
        ],
        txChangesAfter: [],
        sorobanMeta: null,
        events: [],
        diagnosticEvents: [],
      }),
    ),
    events: [],
  };
}

/** token.mint(to, amount) sent by the admin (source-account authorization), applied through `host`. */
async function mint(
  host: Host,
  overlay: Overlay,
  passphrase: string,
  token: string,
  admin: Keypair,
  to: string,
  amount: bigint,
): Promise<JobTransaction> {
  const args = [addr(to), i128(amount)];
  const adminAccount = readAccount(overlay, admin.publicKey());
  if (!adminAccount) throw new Error('the token admin account is missing');
  const call = new Contract(token).call('mint', ...args);
  const func = (call.body.value as xdr.InvokeHostFunctionOp).hostFunction;
  const auth = new xdr.SorobanAuthorizationEntry({
    credentials: xdr.SorobanCredentials.sorobanCredentialsSourceAccount(),
    rootInvocation: new xdr.SorobanAuthorizedInvocation({
      function: xdr.SorobanAuthorizedFunction.sorobanAuthorizedFunctionTypeContractFn(
        func.value as xdr.InvokeContractArgs,
      ),
      subInvocations: [],
    }),
  });
  const balanceKey = contractDataKey(
    token,
    xdr.ScVal.scvVec([xdr.ScVal.scvSymbol('Balance'), addr(to)]),
    'persistent',
  );
  const resourceFee = resourceFeeFor(1, 1);
  const data = new SorobanDataBuilder()
    .setReadOnly([instanceKey(token)])
    .setReadWrite([balanceKey])
    .setResourceFee(resourceFee)
    .build();
  const { hash, envelope } = signed(
    new TransactionBuilder(new Account(admin.publicKey(), adminAccount.seqNum.toString()), {
      fee: BASE_FEE.toString(),
      networkPassphrase: passphrase,
    })
      .setSorobanData(data)
      .addOperation(Operation.invokeHostFunction({ func, auth: [auth] })),
    admin,
  );
  const fee = resourceFee + BASE_FEE;
  overlay.put(
    keyId(accountKey(admin.publicKey())),
    accountEntryData(admin.publicKey(), adminAccount.balance - fee, adminAccount.seqNum + 1n),
  );
  const firstEvent = host.events.length;
  const retval = await host.invoke(token, 'mint', args);
  const events = host.events.slice(firstEvent);
  return {
    hash,
    envelope,
    result: invokeResult(fee, retval),
    meta: transactionMeta(events, retval, []),
    events,
  };
}

export async function friendbot(
  ledger: Ledger,
  q: URLSearchParams,
): Promise<{ status: number; body: unknown }> {
  const bad = (detail: string) => ({
    status: 400,
    body: { type: 'bad_request', title: 'Bad Request', status: 400, detail },
  });
  const address = q.get('addr') ?? '';
  if (!StrKey.isValidEd25519PublicKey(address)) return bad('addr must be a Stellar account address (G…)');
  const usdcText = q.get('usdc');
  let usdc = 0n;
  if (usdcText !== null) {
    const parsed = parseUsdc(usdcText);
    if (parsed === undefined) return bad('usdc must be a non-negative amount with at most 7 decimals');
    if (parsed > MAX_FRIENDBOT_USDC * 10_000_000n) return bad(`usdc must be at most ${MAX_FRIENDBOT_USDC}`);
    usdc = parsed;
  }
  if (readAccount(ledger.store, address) && usdc === 0n) {
    return bad('account already exists (createAccountAlreadyExist); ask for usdc=N to mint test USDC');
  }
  const { token } = readInfo(ledger.store).contracts;
  const admin = Keypair.fromSecret(readSecrets(ledger.store).admin);
  let sequence = 0;
  const done = await ledger.runInternal(async (host, overlay, ledgerSequence) => {
    sequence = ledgerSequence;
    const txs: JobTransaction[] = [];
    if (!readAccount(overlay, address))
      txs.push(createAccount(overlay, ledger.passphrase, address, ledgerSequence));
    if (usdc > 0n) txs.push(await mint(host, overlay, ledger.passphrase, token, admin, address, usdc));
    return txs;
  });
  const created = done.length === 2 || (done.length === 1 && usdc === 0n);
  const first = done[0] as JobTransaction;
  return {
    status: 200,
    body: {
      successful: true,
      hash: first.hash,
      ledger: sequence,
      account: address,
      created,
      usdc: usdc.toString(),
      envelope_xdr: first.envelope.toXdr('base64'),
      result_xdr: first.result.toXdr('base64'),
      result_meta_xdr: first.meta.toXdr('base64'),
    },
  };
}
