#!/usr/bin/env node
// The CLI runs the TypeScript sources through tsx, so there is no separate compile step for the service.
// `start` first checks that every address it will listen on is free, before the CLI and its heavy modules
// load, so a taken port is reported within a moment instead of after the build and the sandbox's genesis.
import { register } from 'tsx/esm/api';

register();
if (process.argv[2] === 'start') {
  const { preflightStart } = await import('../src/cli/commands/start-listeners.ts');
  await preflightStart(process.argv.slice(3));
}
await import('../src/cli/main.ts');
