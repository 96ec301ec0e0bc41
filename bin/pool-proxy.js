#!/usr/bin/env node
// The `pool-proxy` CLI. It runs the compiled JavaScript under dist/ (`npm run build` compiles src/ into it, and
// this first recompiles it when the sources changed since: see compile.js), never the TypeScript through tsx.
// `start` first checks that every address it will listen on is free, before the CLI and its heavy modules
// load, so a taken port is reported within a moment instead of after the build and the sandbox's genesis.
import { ensureCompiled } from './compile.js';

await ensureCompiled();
if (process.argv[2] === 'start') {
  const { preflightStart } = await import('../dist/cli/commands/start-listeners.js');
  await preflightStart(process.argv.slice(3));
}
await import('../dist/cli/main.js');
