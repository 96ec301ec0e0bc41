// A wallet's deposit through the REST API, as the page and wallets make it: prepare (the proxy proves and
// builds the transaction), sign with the wallet's key, submit. Throws with the proxy's answer if either step
// is refused, for tests whose subject comes after the deposit.
import { type Keypair, TransactionBuilder } from '@stellar/stellar-sdk';
import { postJson } from './http.ts';

export interface WalletDeposit {
  /** the proxy's origin */
  proxyUrl: string;
  wallet: Keypair;
  /** the wallet's access token */
  token: string;
  networkPassphrase: string;
  agentId: string;
  /** USDC, as the API writes it */
  amount: string;
}

export async function walletDeposit(d: WalletDeposit): Promise<void> {
  const headers = { authorization: `Bearer ${d.token}` };
  const prepared = await postJson(
    `${d.proxyUrl}/api/deposit/prepare`,
    { amount: d.amount, publicKey: d.wallet.publicKey(), agentId: d.agentId },
    headers,
  );
  if (prepared.status !== 200) throw new Error(`prepare: ${prepared.text}`);
  const tx = TransactionBuilder.fromXDR(prepared.json.transactionXDR, d.networkPassphrase);
  tx.sign(d.wallet);
  const submitted = await postJson(
    `${d.proxyUrl}/api/deposit/submit`,
    { prepareId: prepared.json.prepareId, signedTransactionXDR: tx.toXDR() },
    headers,
  );
  if (submitted.status !== 200) throw new Error(`submit: ${submitted.text}`);
}
