// A wallet's deposit through the REST API, as the page and wallets make it: prepare (the proxy proves and
// builds the transaction), sign with the wallet's key, submit. Throws the proxy's refusal (PoolApiError) if
// either step is refused, for tests whose subject comes after the deposit.
import { type Keypair, TransactionBuilder } from '#stellar-sdk';
import type { DepositResult } from '../../../src/api/types.ts';
import type { PoolApi } from './api.ts';

export interface WalletDeposit {
  /** the proxy's client for the wallet (its access token) */
  api: PoolApi;
  wallet: Keypair;
  networkPassphrase: string;
  agentId: string;
  /** USDC, as the API writes it */
  amount: string;
}

export async function walletDeposit(d: WalletDeposit): Promise<DepositResult> {
  const prepared = await d.api.prepareDeposit({
    amount: d.amount,
    publicKey: d.wallet.publicKey(),
    agentId: d.agentId,
  });
  const tx = TransactionBuilder.fromXDR(prepared.transactionXDR, d.networkPassphrase);
  tx.sign(d.wallet);
  return d.api.submitDeposit({ prepareId: prepared.prepareId, signedTransactionXDR: tx.toXDR() });
}
