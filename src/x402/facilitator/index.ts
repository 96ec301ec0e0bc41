// The local x402 facilitator for `exact` on Stellar (verify + settle with channel accounts, scheme.ts), as
// the `pool-proxy facilitator` command and `pool-proxy start` use it: its HTTP server and channel accounts.
export {
  startFacilitator,
  ensureChannelAccounts,
  parseChannelSecrets,
  type FacilitatorHandle,
} from './server.ts';
