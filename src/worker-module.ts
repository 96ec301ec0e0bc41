// How a worker thread loads a module of this project. The CLI runs the compiled JavaScript (dist/, plain
// Node); tests and development tools run the TypeScript sources through tsx, whose module hooks do not reach
// worker threads. So a module names its worker's module by its own extension, and the worker's first line
// registers tsx only when that module is TypeScript.

/** The module `name` (without extension) beside `from` (an `import.meta.url`), compiled or source as `from` is. */
export function siblingModule(name: string, from: string): URL {
  return new URL(`${name}${from.endsWith('.ts') ? '.ts' : '.js'}`, from);
}

/** Code for `new Worker(code, { eval: true })` that imports `entry`, through tsx when it is TypeScript. */
export function importInWorker(entry: URL): string {
  const load = `import(${JSON.stringify(entry.href)})`;
  if (!entry.pathname.endsWith('.ts')) return `${load};`;
  const tsx = JSON.stringify(import.meta.resolve('tsx/esm/api'));
  return `import(${tsx}).then((tsx) => { tsx.register(); return ${load}; });`;
}
