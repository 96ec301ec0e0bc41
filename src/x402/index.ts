// The x402 layer's public API: paying x402 services from a Stellar account (quote → sign → send →
// confirmTransfer, reconciliation with findAuthorizationUse), safe fetching of agent-named URLs, our
// `exact` scheme client and server for Stellar, and typed errors.
export { X402Error, isX402Error } from './errors.ts';
export { ExactStellarClient } from './exact-client.ts';
export { TransferResources } from './transfer-resources.ts';
export {
  quote,
  sign,
  send,
  type PayerNetwork,
  type Quote,
  type PaymentRecord,
  type SignedPayment,
  type SendResult,
} from './pay.ts';
export { confirmTransfer, findAuthorizationUse, findAnyAuthorizationUse, transfersFrom } from './confirm.ts';
export {
  safeFetch,
  parseAllowedHosts,
  USER_AGENT,
  type SafeFetchOptions,
  type SafeRequest,
} from './safe-fetch.ts';
export { addressClass, type AddressClass } from './address-class.ts';
