// Fault injection for crash tests: `POOL_PROXY_FAULT=<flow>:<step>` kills the whole process (SIGKILL, as a
// power cut would) when the named step is reached, e.g. `withdraw:before-send`. Off unless that variable is
// set explicitly; the steps are listed in docs/OPERATIONS.md.
const target = process.env.POOL_PROXY_FAULT ?? '';

export function fault(flow: string, step: string): void {
  if (target !== '' && target === `${flow}:${step}`) {
    process.stderr.write(`fault injection: killing the process at ${target}\n`);
    process.kill(process.pid, 'SIGKILL');
  }
}
