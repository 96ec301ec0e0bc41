// A real PostgreSQL server for tests: Debian's `postgresql` package (15), initdb into a fresh temporary
// directory, started with pg_ctl on a free port, its unix socket in that directory. Run as root, the server
// runs as the `postgres` user (PostgreSQL refuses to run as root). One server per test file: `startPostgres()`
// once, `database()` for each test that wants an empty database, `stop()` at the end.
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freeLoopbackPort } from '../../src/listen.ts';

export interface PostgresServer {
  /** `postgres://` URL of the server's default database. */
  url: string;
  /** A new empty database; returns its URL. */
  database(name?: string): Promise<string>;
  stop(): Promise<void>;
}

function binDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  for (const v of versions) {
    const dir = join(root, v, 'bin');
    if (existsSync(join(dir, 'pg_ctl'))) return dir;
  }
  throw new Error('PostgreSQL is not installed: apt-get install -y postgresql');
}

/** Runs a PostgreSQL binary, as the `postgres` user when this process is root. */
function run(bin: string, args: string[]): void {
  const asRoot = process.getuid?.() === 0;
  const [command, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, args];
  execFileSync(command, argv, { stdio: ['ignore', 'pipe', 'pipe'], cwd: tmpdir() });
}

let databases = 0;

export async function startPostgres(): Promise<PostgresServer> {
  const bin = binDir();
  const dir = mkdtempSync(join(tmpdir(), 'pool-proxy-pg-'));
  const data = join(dir, 'data');
  if (process.getuid?.() === 0) {
    const ids = execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim();
    const gid = execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim();
    chownSync(dir, Number(ids), Number(gid));
  }
  run(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  let port = 0;
  for (let attempt = 0; ; attempt++) {
    port = await freeLoopbackPort();
    const options = [
      `-p ${port}`,
      '-c listen_addresses=127.0.0.1',
      `-c unix_socket_directories=${dir}`,
      '-c fsync=off',
      '-c synchronous_commit=off',
      '-c full_page_writes=off',
      '-c max_connections=300',
      '-c shared_buffers=32MB',
    ].join(' ');
    try {
      run(join(bin, 'pg_ctl'), [
        '-D',
        data,
        '-o',
        options,
        '-l',
        join(dir, 'log'),
        '-w',
        '-t',
        '60',
        'start',
      ]);
      break;
    } catch (error) {
      // another process took the port between the probe and the start
      if (attempt >= 3) throw error;
    }
  }
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  return {
    url,
    async database(name = `test_${process.pid}_${++databases}`) {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${name}`);
      } finally {
        await client.end();
      }
      return `postgres://postgres@127.0.0.1:${port}/${name}`;
    },
    async stop() {
      try {
        run(join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
