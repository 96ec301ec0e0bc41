#!/usr/bin/env node
// The CLI runs the TypeScript sources through tsx, so there is no separate compile step for the service.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
