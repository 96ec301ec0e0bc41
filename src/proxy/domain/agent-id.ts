// Agent identifiers are chosen by callers, so they are kept to a small, log-safe alphabet.
export const AGENT_ID_PATTERN = /^[A-Za-z0-9._:-]{1,64}$/;

export function isAgentId(value: unknown): value is string {
  return typeof value === 'string' && AGENT_ID_PATTERN.test(value);
}

/** Owner of the agents created through the loopback operator endpoints (local MCP agents). */
export const OPERATOR_OWNER = 'operator';
