// Friendbot: `GET|POST /friendbot?addr=G…` creates the account from the network root account (10,000 XLM),
// plus whatever the network's friendbot extension adds (e.g. test tokens). Each step is recorded as a signed
// transaction in the ledger, so `rpc.Server.requestAirdrop` / `fundAddress` (which read it back) work.
import { Account, Asset, Keypair, Operation, StrKey, TransactionBuilder, xdr } from '#stellar-sdk';
import { readInfo, readSecrets, STARTING_BALANCE } from './genesis.ts';
import type { NetworkDefinition } from './network.ts';
import { accountEntryData, accountKey, keyId } from './keys.ts';
import { createTrustline, readAccount, readTrustline, writeAccount } from './accounts.ts';
import type { JobTransaction, Chain } from './chain.ts';
import type { Overlay } from './overlay.ts';
import { BASE_FEE } from './xdr-records.ts';

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
  writeAccount(overlay, root.publicKey(), {
    ...rootAccount,
    balance: rootAccount.balance - STARTING_BALANCE - BASE_FEE,
    seqNum: rootAccount.seqNum + 1n,
  });
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

/** What testnet's friendbot answers (400) for an account that exists. */
const ALREADY_FUNDED = 'account already funded to starting balance';

export async function friendbot<I extends object, S extends object>(
  chain: Chain,
  network: NetworkDefinition<I, S>,
  q: URLSearchParams,
): Promise<{ status: number; body: unknown }> {
  // testnet's friendbot answers its refusals as this problem document (the `stellar` CLI reads `detail`)
  const bad = (detail: string) => ({
    status: 400,
    body: {
      type: 'https://stellar.org/horizon-errors/bad_request',
      title: 'Bad Request',
      status: 400,
      detail,
    },
  });
  const address = q.get('addr') ?? '';
  if (!StrKey.isValidEd25519PublicKey(address)) return bad('addr must be a Stellar account address (G…)');
  const ext = network.friendbot;
  const parsed = ext ? ext.parse(q) : { request: undefined };
  if (typeof parsed === 'string') return bad(parsed);
  const { request } = parsed;
  if (readAccount(chain.state, address) && request === undefined) {
    // testnet's wording, which `stellar keys fund` takes as "already funded" rather than a failure, then the
    // operation's result code, which the JS SDK's requestAirdrop looks for to read the account back instead
    return bad(
      `${ALREADY_FUNDED} (createAccountAlreadyExist)${ext?.existsHint ? `; ${ext.existsHint}` : ''}`,
    );
  }
  const info = readInfo<I>(chain.state);
  const secrets = readSecrets<S>(chain.state);
  let sequence = 0;
  let reply: Record<string, unknown> = {};
  let created = false;
  const done = await chain.runInternal(async ({ overlay, ledgerSequence, invoke }) => {
    sequence = ledgerSequence;
    const txs: JobTransaction[] = [];
    if (!readAccount(overlay, address)) {
      txs.push(createAccount(overlay, chain.passphrase, address, ledgerSequence));
      created = true;
    }
    if (ext) {
      const extra = await ext.apply(
        {
          passphrase: chain.passphrase,
          ledgerSequence,
          overlay,
          info,
          secrets,
          createTrustline: (account, code, issuer) => {
            const asset = new Asset(code, issuer);
            if (readTrustline(overlay, account, asset)) return false;
            createTrustline(overlay, account, asset);
            return true;
          },
          invoke,
        },
        address,
        request,
      );
      txs.push(...extra.txs);
      reply = extra.reply;
    }
    return txs;
  });
  const first = done[0] as JobTransaction;
  return {
    status: 200,
    body: {
      successful: true,
      hash: first.hash,
      ledger: sequence,
      account: address,
      created,
      ...reply,
      envelope_xdr: first.envelope.toXdr('base64'),
      result_xdr: first.result.toXdr('base64'),
      result_meta_xdr: first.meta.toXdr('base64'),
    },
  };
}
