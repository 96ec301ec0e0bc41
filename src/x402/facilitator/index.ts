// The local x402 facilitator for `exact` on Stellar: the scheme (verify + settle with channel accounts) and
// its HTTP server.
export { ChannelPool } from './channels.ts';
export {
  ExactStellarFacilitatorScheme,
  DEFAULT_MAX_FEE_STROOPS,
  type FacilitatorSchemeOptions,
} from './scheme.ts';
export {
  startFacilitator,
  ensureChannelAccounts,
  parseChannelSecrets,
  type FacilitatorOptions,
  type FacilitatorHandle,
} from './server.ts';
