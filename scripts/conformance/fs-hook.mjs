// Resolves the conformance CLI's "fs" to fs-shim.mjs (node:fs plus globSync).
export async function resolve(specifier, context, next) {
  if ((specifier === 'fs' || specifier === 'node:fs') && context.parentURL?.includes('/conformance/dist/'))
    return { url: new URL('./fs-shim.mjs', import.meta.url).href, shortCircuit: true };
  return next(specifier, context);
}
