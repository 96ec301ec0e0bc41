// `node --import scripts/conformance/node20-fs.mjs …`: gives the MCP conformance CLI (which needs Node >= 22's
// fs.globSync) a node:fs with globSync on Node 20, through a module resolve hook (fs-hook.mjs, fs-shim.mjs).
import { register } from 'node:module';
register('./fs-hook.mjs', import.meta.url);
