// The wallet, through the official @stellar/freighter-api. Every Freighter error ({code, message}) becomes a
// Problem; a signature from another account than the connected one is refused here. `readWallet` asks
// Freighter afresh which account and network it is on (the page re-checks before every signature), and
// `watchWallet` reports changes made in Freighter while the page is open.
import {
  getAddress,
  getNetworkDetails,
  isConnected,
  requestAccess,
  signMessage,
  signTransaction,
} from '@stellar/freighter-api';
import { Problem } from './problem.ts';

/** How often the page asks Freighter whether its account or network changed. */
const WATCH_MS = 1000;

export interface Wallet {
  /** Empty when Freighter is locked or no longer shares an account with this page. */
  address: string;
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

export function sameWallet(a: Wallet | undefined, b: Wallet | undefined): boolean {
  return (
    a !== undefined &&
    b !== undefined &&
    a.address === b.address &&
    a.networkPassphrase === b.networkPassphrase
  );
}

/** Whether the Freighter extension answers in this browser (it takes up to 2 s to say no). */
export async function freighterPresent(): Promise<boolean> {
  return (await isConnected()).isConnected;
}

export async function connect(): Promise<Wallet> {
  if (!(await freighterPresent()))
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

/** The account and network Freighter is on now. */
export async function readWallet(): Promise<Wallet> {
  const [address, details] = await Promise.all([getAddress(), getNetworkDetails()]);
  if (address.error) throw walletProblem(address.error, 'address');
  if (details.error) throw walletProblem(details.error, 'network details');
  return {
    address: address.address,
    network: details.network,
    networkPassphrase: details.networkPassphrase,
  };
}

/**
 * Reports what Freighter is on, every WATCH_MS, while the page is open; returns the function that stops it.
 * `onChange` compares with what the page shows (freighter-api's WatchWalletChanges compares with what it last
 * saw itself, so a switch the page noticed first, then undone before its next poll, would go unreported).
 */
export function watchWallet(onChange: (wallet: Wallet) => void): () => void {
  let running = true;
  const poll = async (): Promise<void> => {
    if (!running) return;
    try {
      onChange(await readWallet());
    } catch {
      // Freighter did not answer this time (locked, busy): ask again at the next poll.
    }
    if (running) setTimeout(() => void poll(), WATCH_MS);
  };
  void poll();
  return () => {
    running = false;
  };
}

/** SEP-53 signature of `message` by `address`, base64: the login challenge, and each confirmation the proxy asks
 * of the wallet (a withdrawal, a loosening of the withdrawal settings). */
export async function signText(message: string, wallet: Wallet): Promise<string> {
  const result = await signMessage(message, {
    address: wallet.address,
    networkPassphrase: wallet.networkPassphrase,
  });
  if (result.error || !result.signedMessage) throw walletProblem(result.error, 'message signature');
  if (result.signerAddress && result.signerAddress !== wallet.address)
    throw new Problem(
      'Wrong account',
      `Freighter signed with ${result.signerAddress}, not ${wallet.address}.`,
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

export async function signTx(xdr: string, wallet: Wallet): Promise<string> {
  const result = await signTransaction(xdr, {
    address: wallet.address,
    networkPassphrase: wallet.networkPassphrase,
  });
  if (result.error || !result.signedTxXdr) throw walletProblem(result.error, 'transaction signature');
  if (result.signerAddress && result.signerAddress !== wallet.address)
    throw new Problem(
      'Wrong account',
      `Freighter signed with ${result.signerAddress}, not ${wallet.address}.`,
      'wallet',
    );
  return result.signedTxXdr;
}
