// Entry point of the `pool-proxy` CLI (bin/pool-proxy.js runs its compiled form): the program for this
// command line (./program.ts, which imports only the command being run), then the command.
import { cliProgram } from './program.ts';

await (await cliProgram(process.argv)).parseAsync(process.argv);
