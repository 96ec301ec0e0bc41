// The x402 layer's public API: paying x402 services from a Stellar account (quote → sign → send →
// confirmTransfer, reconciliation with findAuthorizationUse), safe fetching of agent-named URLs, our
// `exact` scheme client and server for Stellar, and typed errors.
export { X402Error, isX402Error, type X402ErrorCode } from './errors.ts';
export {
  ExactStellarClient,
  checkRequirements,
  type ExactClientOptions,
  type SignedTransfer,
} from './exact-client.ts';
export { ExactStellarServerScheme, toStroops } from './exact-server.ts';
export { TransferResources } from './transfer-resources.ts';
export {
  quote,
  sign,
  send,
  PAYMENT_SIGNATURE_HEADER,
  type PayerNetwork,
  type Quote,
  type PaymentRecord,
  type SignedPayment,
  type SendResult,
} from './pay.ts';
export {
  confirmTransfer,
  findAuthorizationUse,
  findAnyAuthorizationUse,
  type ExpectedTransfer,
  type ConfirmedTransfer,
  type AuthorizationRecord,
  type AuthorizationUse,
} from './confirm.ts';
export {
  safeFetch,
  addressClass,
  isAllowedHost,
  parseAllowedHosts,
  parseServiceUrl,
  sanitizeHeaders,
  DEFAULT_MAX_RESPONSE_BYTES,
  DEFAULT_TIMEOUT_MS,
  MAX_REDIRECTS,
  USER_AGENT,
  type AddressClass,
  type SafeFetchOptions,
  type SafeRequest,
  type SafeResponse,
} from './safe-fetch.ts';
export {
  DEFAULT_LEDGER_SECONDS,
  measureLedgerSeconds,
  ledgerSecondsOf,
  expirationLedger,
  type LedgerSecondsRange,
} from './rpc.ts';
export { paidRequestListener, type PaidHandler, type PaidReply, type PaidRequest } from './paid-http.ts';
