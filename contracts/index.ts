// The pool network's contracts, by name (each lives in its own file), and the network that deploys them.
export { aspMembership } from './asp-membership.ts';
export { aspNonMembership } from './asp-non-membership.ts';
export * from './network.ts';
export { pool } from './pool.ts';
export { verifier } from './verifier.ts';
