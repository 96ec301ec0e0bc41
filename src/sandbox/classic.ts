// Classic operations the sandbox applies as stellar-core does: createAccount, payment (XLM and credit
// assets through trustlines; the issuer mints and burns) and changeTrust, each from its own source account
// when it names one (else the transaction's), with stellar-core's operation result codes, reserves
// ((2 + sub-entries) × 0.5 XLM) and all-or-nothing transactions. Moving an asset emits its Stellar Asset
// Contract's event, as CAP-67 (protocol 23) has classic operations do: `transfer` [transfer, from, to,
// asset], `mint` from the issuer [mint, to, asset], `burn` to it [burn, from, asset], data the i128
// amount, from the asset's contract id (deployed or not). Anything else is refused at submission with
// txNotSupported and a diagnostic message that names what is not supported.
import { Address, Asset, nativeToScVal, type Operation, type Transaction, xdr } from '#stellar-sdk';
import {
  createTrustline,
  deleteTrustline,
  INT64_MAX,
  minBalance,
  readAccount,
  readTrustline,
  writeAccount,
  writeTrustline,
} from './accounts.ts';
import { accountEntryData, accountKey, keyId } from './keys.ts';
import { Overlay } from './overlay.ts';

const SUPPORTED = new Set(['createAccount', 'payment', 'changeTrust']);

/** The Soroban operations: each must be alone in its transaction, which carries Soroban data. */
const SOROBAN_OPERATIONS = new Set(['invokeHostFunction', 'extendFootprintTtl', 'restoreFootprint']);

/** True for a transaction made only of classic operations (no Soroban operation). */
export function isClassic(tx: Transaction): boolean {
  return tx.operations.length > 0 && tx.operations.every((op) => !SOROBAN_OPERATIONS.has(op.type));
}

/** Why the sandbox cannot apply this transaction's operations (undefined: it can). */
export function unsupportedOperations(tx: Transaction): string | undefined {
  const ops = tx.operations;
  const soroban = ops.find((op) => SOROBAN_OPERATIONS.has(op.type));
  if (soroban) {
    return ops.length === 1 ? undefined : `an ${soroban.type} operation must be alone in its transaction`;
  }
  for (const op of ops) {
    if (!SUPPORTED.has(op.type)) {
      return `operation ${op.type} is not supported by the sandbox (it applies createAccount, payment, changeTrust, invokeHostFunction, extendFootprintTtl and restoreFootprint)`;
    }
    if (op.source && !op.source.startsWith('G')) {
      return 'muxed operation source accounts are not supported by the sandbox';
    }
    if (
      op.type === 'payment' &&
      (op.destination.startsWith('M') || op.asset.getAssetType() === 'credit_alphanum12')
    ) {
      return 'payments to muxed accounts and of 12-character asset codes are not supported by the sandbox';
    }
    if (op.type === 'changeTrust' && !(op.line instanceof Asset)) {
      return 'liquidity pool trustlines are not supported by the sandbox';
    }
  }
  return undefined;
}

/** "12.5" → 125000000 stroops, as the SDK decodes operation amounts. */
const stroops = (amount: string) => {
  const [whole, frac = ''] = amount.split('.');
  return BigInt(whole as string) * 10_000_000n + BigInt(frac.padEnd(7, '0'));
};

const result = {
  createAccount: (code: string) =>
    xdr.OperationResult.opInner(
      xdr.OperationResultTr.createAccount(
        (xdr.CreateAccountResult[code as 'createAccountSuccess'] as () => xdr.CreateAccountResult)(),
      ),
    ),
  payment: (code: string) =>
    xdr.OperationResult.opInner(
      xdr.OperationResultTr.payment(
        (xdr.PaymentResult[code as 'paymentSuccess'] as () => xdr.PaymentResult)(),
      ),
    ),
  changeTrust: (code: string) =>
    xdr.OperationResult.opInner(
      xdr.OperationResultTr.changeTrust(
        (xdr.ChangeTrustResult[code as 'changeTrustSuccess'] as () => xdr.ChangeTrustResult)(),
      ),
    ),
};

/** Lumens `accountId` may spend: its balance above the reserve its sub-entries require. */
function spendable(overlay: Overlay, accountId: string): bigint {
  const a = readAccount(overlay, accountId);
  return a ? a.balance - minBalance(a.numSubEntries) : 0n;
}

/** Collects the asset events of one operation (CAP-67). */
interface AssetEvents {
  passphrase: string;
  events: xdr.ContractEvent[];
}

const sep11 = (asset: Asset) => (asset.isNative() ? 'native' : `${asset.getCode()}:${asset.getIssuer()}`);

/** The event `name` of `asset`'s Stellar Asset Contract with `addresses` and the amount. */
function assetEvent(
  sink: AssetEvents,
  asset: Asset,
  name: string,
  addresses: string[],
  amount: bigint,
): void {
  sink.events.push(
    new xdr.ContractEvent({
      ext: xdr.ExtensionPoint.v0(),
      contractId: new Address(asset.contractId(sink.passphrase)).toScAddress().value as xdr.ContractId,
      type: xdr.ContractEventType.contract,
      body: xdr.ContractEventBody.v0(
        new xdr.ContractEventV0({
          topics: [
            xdr.ScVal.scvSymbol(name),
            ...addresses.map((a) => new Address(a).toScVal()),
            xdr.ScVal.scvString(sep11(asset)),
          ],
          data: nativeToScVal(amount, { type: 'i128' }),
        }),
      ),
    }),
  );
}

function createAccount(
  overlay: Overlay,
  source: string,
  op: Operation.CreateAccount,
  ledger: number,
  sink: AssetEvents,
) {
  const amount = stroops(op.startingBalance);
  if (amount <= 0n || op.destination === source) return result.createAccount('createAccountMalformed');
  if (readAccount(overlay, op.destination)) return result.createAccount('createAccountAlreadyExist');
  if (amount < minBalance(0)) return result.createAccount('createAccountLowReserve');
  if (spendable(overlay, source) < amount) return result.createAccount('createAccountUnderfunded');
  const from = readAccount(overlay, source)!;
  writeAccount(overlay, source, { ...from, balance: from.balance - amount });
  overlay.put(
    keyId(accountKey(op.destination)),
    accountEntryData(op.destination, amount, BigInt(ledger) << 32n),
  );
  assetEvent(sink, Asset.native(), 'transfer', [source, op.destination], amount);
  return result.createAccount('createAccountSuccess');
}

function payment(overlay: Overlay, source: string, op: Operation.Payment, sink: AssetEvents) {
  const amount = stroops(op.amount);
  if (amount <= 0n) return result.payment('paymentMalformed');
  const asset = op.asset;
  if (!readAccount(overlay, op.destination)) return result.payment('paymentNoDestination');
  if (asset.isNative()) {
    if (spendable(overlay, source) < amount) return result.payment('paymentUnderfunded');
    const from = readAccount(overlay, source)!;
    writeAccount(overlay, source, { ...from, balance: from.balance - amount });
    const to = readAccount(overlay, op.destination)!;
    if (to.balance + amount > INT64_MAX) return result.payment('paymentLineFull');
    writeAccount(overlay, op.destination, { ...to, balance: to.balance + amount });
    assetEvent(sink, asset, 'transfer', [source, op.destination], amount);
    return result.payment('paymentSuccess');
  }
  const issuer = asset.getIssuer();
  if (!readAccount(overlay, issuer as string)) return result.payment('paymentNoIssuer');
  // the issuer's supply is unlimited: paying from it mints, paying to it burns
  if (source !== issuer) {
    const line = readTrustline(overlay, source, asset);
    if (!line) return result.payment('paymentSrcNoTrust');
    if ((line.flags & 1) === 0) return result.payment('paymentSrcNotAuthorized');
    if (line.balance < amount) return result.payment('paymentUnderfunded');
    writeTrustline(overlay, source, asset, { ...line, balance: line.balance - amount });
  }
  if (op.destination !== issuer) {
    const line = readTrustline(overlay, op.destination, asset);
    if (!line) return result.payment('paymentNoTrust');
    if ((line.flags & 1) === 0) return result.payment('paymentNotAuthorized');
    if (line.balance + amount > line.limit) return result.payment('paymentLineFull');
    writeTrustline(overlay, op.destination, asset, { ...line, balance: line.balance + amount });
  }
  if (source === issuer) assetEvent(sink, asset, 'mint', [op.destination], amount);
  else if (op.destination === issuer) assetEvent(sink, asset, 'burn', [source], amount);
  else assetEvent(sink, asset, 'transfer', [source, op.destination], amount);
  return result.payment('paymentSuccess');
}

function changeTrust(overlay: Overlay, source: string, op: Operation.ChangeTrust) {
  const asset = op.line as Asset;
  const limit = op.limit === undefined ? INT64_MAX : stroops(op.limit);
  if (asset.isNative() || limit < 0n) return result.changeTrust('changeTrustMalformed');
  if (asset.getIssuer() === source) return result.changeTrust('changeTrustSelfNotAllowed');
  if (!readAccount(overlay, asset.getIssuer() as string)) return result.changeTrust('changeTrustNoIssuer');
  const line = readTrustline(overlay, source, asset);
  if (!line) {
    if (limit === 0n) return result.changeTrust('changeTrustInvalidLimit');
    const account = readAccount(overlay, source)!;
    if (account.balance < minBalance(account.numSubEntries + 1))
      return result.changeTrust('changeTrustLowReserve');
    createTrustline(overlay, source, asset);
    if (limit !== INT64_MAX) writeTrustline(overlay, source, asset, { balance: 0n, limit, flags: 1 });
    return result.changeTrust('changeTrustSuccess');
  }
  if (limit < line.balance) return result.changeTrust('changeTrustInvalidLimit');
  if (limit === 0n) {
    deleteTrustline(overlay, source, asset);
    const account = readAccount(overlay, source)!;
    writeAccount(overlay, source, { ...account, numSubEntries: account.numSubEntries - 1 });
  } else writeTrustline(overlay, source, asset, { ...line, limit });
  return result.changeTrust('changeTrustSuccess');
}

export interface ClassicOutcome {
  success: boolean;
  results: xdr.OperationResult[];
  /** each operation's overlay, in order (merged into the parent only on success) */
  overlays: Overlay[];
  /** each operation's asset events (CAP-67), in order */
  events: xdr.ContractEvent[][];
}

/**
 * Applies the operations of a classic transaction on top of `parent`; nothing is merged into `parent`
 * unless every operation succeeds (the caller merges `overlays`). An operation's own source account acts
 * for it; one that does not exist fails it with opNoAccount, as in stellar-core.
 */
export function applyClassic(
  parent: Overlay,
  tx: Transaction,
  ledger: number,
  passphrase: string,
): ClassicOutcome {
  const overlays: Overlay[] = [];
  const results: xdr.OperationResult[] = [];
  const events: xdr.ContractEvent[][] = [];
  let success = true;
  let base = parent;
  for (const op of tx.operations) {
    const overlay = new Overlay(base, ledger);
    const sink: AssetEvents = { passphrase, events: [] };
    const source = op.source ?? tx.source;
    let r: xdr.OperationResult;
    if (!readAccount(overlay, source)) r = xdr.OperationResult.opNoAccount();
    else if (op.type === 'createAccount') r = createAccount(overlay, source, op, ledger, sink);
    else if (op.type === 'payment') r = payment(overlay, source, op, sink);
    else if (op.type === 'changeTrust') r = changeTrust(overlay, source, op);
    else r = xdr.OperationResult.opNotSupported();
    results.push(r);
    events.push(sink.events);
    const tr = (r.value as { value?: { type?: string } } | undefined)?.value?.type ?? '';
    if (!tr.endsWith('Success')) success = false;
    overlays.push(overlay);
    base = overlay;
  }
  return { success, results, overlays, events: success ? events : events.map(() => []) };
}
