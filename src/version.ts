import { readFileSync } from 'node:fs';

// Read once from package.json so /health, the CLI and the MCP server report the same semantic version.
export const VERSION: string = JSON.parse(
  readFileSync(new URL('../package.json', import.meta.url), 'utf8'),
).version;
