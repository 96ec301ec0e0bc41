// A stand-in for the Freighter browser extension. @stellar/freighter-api talks to the extension only through
// window.postMessage: a request {source: "FREIGHTER_EXTERNAL_MSG_REQUEST", messageId, type, …} is answered on
// the same window by {source: "FREIGHTER_EXTERNAL_MSG_RESPONSE", messagedId (sic), …}. An init script relays
// each request to a function exposed by the test, which answers it and signs in Node with a real keypair
// (SEP-53 messages, transaction envelopes), so the page's own freighter-api code path runs unchanged. The test
// can switch the wallet's account or network at any time, as a user would in Freighter.
import type { BrowserContext } from 'playwright-core';
import { Keypair, TransactionBuilder } from '#stellar-sdk';

export interface FreighterRequest {
  type: string;
  [field: string]: unknown;
}

export interface StandIn {
  /** The account Freighter is on now (assign to switch accounts). */
  keypair: Keypair;
  /** The network passphrase Freighter is on now (assign to switch networks). */
  walletPassphrase: string;
  /** Every request the page sent, in order. */
  requests: FreighterRequest[];
  /** When set, the next signature request is declined as a user would (Freighter's error shape). */
  declineNextSignature: boolean;
  /** Runs before a request is answered, while the page waits for the wallet (e.g. to read its progress). */
  beforeAnswer?: (request: FreighterRequest) => Promise<void>;
}

const RELAY = `
(() => {
  window.addEventListener('message', async (event) => {
    if (event.source !== window || !event.data || event.data.source !== 'FREIGHTER_EXTERNAL_MSG_REQUEST') return;
    const request = event.data;
    const answer = await window.__freighterStandIn(JSON.parse(JSON.stringify(request)));
    window.postMessage(
      { source: 'FREIGHTER_EXTERNAL_MSG_RESPONSE', messagedId: request.messageId, ...answer },
      window.location.origin,
    );
  });
})();
`;

const DECLINED = { code: -4, message: 'The user rejected this request.' };

/** Installs the stand-in in every page of `context`; the wallet reports `walletPassphrase` as its network. */
export async function installFreighter(
  context: BrowserContext,
  keypair: Keypair,
  walletPassphrase: string,
  rpcUrl: string,
): Promise<StandIn> {
  const standIn: StandIn = { keypair, walletPassphrase, requests: [], declineNextSignature: false };
  await context.exposeFunction('__freighterStandIn', async (request: FreighterRequest) => {
    standIn.requests.push(request);
    await standIn.beforeAnswer?.(request);
    const address = standIn.keypair.publicKey();
    const passphrase = standIn.walletPassphrase;
    switch (request.type) {
      case 'REQUEST_CONNECTION_STATUS':
        return { isConnected: true };
      case 'REQUEST_ALLOWED_STATUS':
        return { isAllowed: true };
      case 'REQUEST_ACCESS':
      case 'REQUEST_PUBLIC_KEY':
        return { publicKey: address };
      case 'REQUEST_NETWORK_DETAILS':
        return {
          networkDetails: {
            network: 'CUSTOM',
            networkName: 'Custom',
            networkUrl: rpcUrl,
            networkPassphrase: passphrase,
            sorobanRpcUrl: rpcUrl,
          },
        };
      case 'SUBMIT_BLOB': {
        if (standIn.declineNextSignature) {
          standIn.declineNextSignature = false;
          return { apiError: DECLINED };
        }
        const signature = standIn.keypair.signMessage(String(request.blob));
        return { signedBlob: Buffer.from(signature).toString('base64'), signerAddress: address };
      }
      case 'SUBMIT_TRANSACTION': {
        if (standIn.declineNextSignature) {
          standIn.declineNextSignature = false;
          return { apiError: DECLINED };
        }
        // Freighter signs for its own network and refuses a request for another one.
        if (request.networkPassphrase && request.networkPassphrase !== passphrase)
          return { apiError: { code: -3, message: 'The transaction is for another network.' } };
        const tx = TransactionBuilder.fromXDR(String(request.transactionXdr), passphrase);
        tx.sign(standIn.keypair);
        return { signedTransaction: tx.toXDR(), signerAddress: address };
      }
      default:
        return { apiError: { code: -1, message: `the stand-in does not implement ${request.type}` } };
    }
  });
  await context.addInitScript(RELAY);
  return standIn;
}
