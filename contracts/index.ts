// The contracts the sandbox can run, by name. Each lives in its own file.
import { ContractRegistry } from '../src/sandbox/host.ts';
import { aspMembership } from './asp-membership.ts';
import { aspNonMembership } from './asp-non-membership.ts';
import { pool } from './pool.ts';
import { token } from './token.ts';
import { verifier } from './verifier.ts';

export { aspMembership, aspNonMembership, pool, token, verifier };

/** Registry with every contract; the token runs as the Stellar Asset Contract executable. */
export function contractRegistry(): ContractRegistry {
  const registry = new ContractRegistry();
  registry.register(token, true);
  for (const def of [verifier, pool, aspMembership, aspNonMembership]) registry.register(def);
  return registry;
}
