// Agent identifiers are chosen by callers, so they are kept to a small, log-safe alphabet. The rule is the
// one key derivation enforces (src/crypto), so an id the API accepts always has keys.
import { AGENT_ID_PATTERN } from '../crypto/agent-keys.ts';

export { AGENT_ID_PATTERN };

export function isAgentId(value: unknown): value is string {
  return typeof value === 'string' && AGENT_ID_PATTERN.test(value);
}

/** Owner of the agents created through the loopback operator endpoints (local MCP agents). */
export const OPERATOR_OWNER = 'operator';
