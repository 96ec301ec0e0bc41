// What the demo's wallets do through the proxy's REST API (the shared client, src/api/client.ts), acting as a
// wallet does: SEP-53 login with its key, and a deposit in two steps (prepare → sign the returned transaction
// → submit). Everything else is a plain call of the client.
import { type Keypair, TransactionBuilder } from '#stellar-sdk';
import type { PoolApi } from '../../api/client.ts';
import type { DepositResult } from '../../api/types.ts';

/** Logs the wallet in; the answer is the client acting for it. */
export async function login(api: PoolApi, wallet: Keypair): Promise<PoolApi> {
  const publicKey = wallet.publicKey();
  const { challenge } = await api.challenge(publicKey);
  const signature = Buffer.from(wallet.signMessage(challenge)).toString('base64');
  const { token } = await api.verify({ publicKey, challenge, signature });
  return api.as({ kind: 'wallet', token });
}

/** Prepares a deposit for `agentId`, signs the prepared transaction with the wallet's key and submits it. */
export async function deposit(
  api: PoolApi,
  wallet: Keypair,
  agentId: string,
  amount: string,
  networkPassphrase: string,
): Promise<DepositResult> {
  const prepared = await api.prepareDeposit({ amount, publicKey: wallet.publicKey(), agentId });
  const tx = TransactionBuilder.fromXDR(prepared.transactionXDR, networkPassphrase);
  tx.sign(wallet);
  return api.submitDeposit({ prepareId: prepared.prepareId, signedTransactionXDR: tx.toXDR() });
}
