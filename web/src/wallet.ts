// The wallet, through the official @stellar/freighter-api. Every Freighter error ({code, message}) becomes a
// Problem; a signature from another account than the connected one is refused here.
import {
  getNetworkDetails,
  isConnected,
  requestAccess,
  signMessage,
  signTransaction,
} from '@stellar/freighter-api';
import { Problem } from './problem.ts';

export interface WalletNetwork {
  network: string;
  networkPassphrase: string;
}

function walletProblem(error: { message?: string; code?: number } | undefined, action: string): Problem {
  return new Problem(
    `Wallet: ${action} refused`,
    error?.message || 'Freighter did not complete the request.',
    'wallet',
  );
}

export async function connect(): Promise<{ address: string } & WalletNetwork> {
  const connected = await isConnected();
  if (!connected.isConnected)
    throw new Problem(
      'Freighter not found',
      'Install the Freighter browser extension (freighter.app), unlock it, and reload this page.',
      'wallet_missing',
    );
  const access = await requestAccess();
  if (access.error || !access.address) throw walletProblem(access.error, 'access');
  const details = await getNetworkDetails();
  if (details.error) throw walletProblem(details.error, 'network details');
  return { address: access.address, network: details.network, networkPassphrase: details.networkPassphrase };
}

/** SEP-53 signature of `message` by `address`, base64. */
export async function signLogin(
  message: string,
  address: string,
  networkPassphrase: string,
): Promise<string> {
  const result = await signMessage(message, { address, networkPassphrase });
  if (result.error || !result.signedMessage) throw walletProblem(result.error, 'message signature');
  if (result.signerAddress && result.signerAddress !== address)
    throw new Problem(
      'Wrong account',
      `Freighter signed with ${result.signerAddress}, not ${address}.`,
      'wallet',
    );
  // Freighter ≥ 4 answers base64; older versions a byte buffer.
  const signed = result.signedMessage as unknown;
  if (typeof signed === 'string') return signed;
  const bytes = new Uint8Array(signed as ArrayLike<number>);
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary);
}

export async function signTx(xdr: string, address: string, networkPassphrase: string): Promise<string> {
  const result = await signTransaction(xdr, { address, networkPassphrase });
  if (result.error || !result.signedTxXdr) throw walletProblem(result.error, 'transaction signature');
  if (result.signerAddress && result.signerAddress !== address)
    throw new Problem(
      'Wrong account',
      `Freighter signed with ${result.signerAddress}, not ${address}.`,
      'wallet',
    );
  return result.signedTxXdr;
}
