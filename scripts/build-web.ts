// Compiles the wallet page (web/) into build/web/: web/src/main.ts and its imports (including
// @stellar/freighter-api) bundled by esbuild into one app.js, web/style.css minified into app.css, and
// web/index.html and web/favicon.svg copied. The proxy serves exactly these files (src/proxy/http/web.ts).
import { copyFileSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
export const WEB_SOURCE_DIR = join(root, 'web');
export const WEB_BUILD_DIR = join(root, 'build', 'web');

/** Builds into a scratch folder, then renames each file into `outDir`, so a running proxy never reads a
 * half-written file. */
export async function buildWeb(outDir: string = WEB_BUILD_DIR): Promise<void> {
  mkdirSync(outDir, { recursive: true });
  const scratch = mkdtempSync(join(dirname(outDir), '.web-build-'));
  try {
    await build({
      entryPoints: [join(WEB_SOURCE_DIR, 'src', 'main.ts')],
      outfile: join(scratch, 'app.js'),
      bundle: true,
      format: 'esm',
      platform: 'browser',
      target: ['chrome120', 'firefox120', 'safari16'],
      minify: true,
      sourcemap: false,
      legalComments: 'none',
      logLevel: 'warning',
      absWorkingDir: root,
    });
    await build({
      entryPoints: [join(WEB_SOURCE_DIR, 'style.css')],
      outfile: join(scratch, 'app.css'),
      bundle: true,
      minify: true,
      logLevel: 'warning',
      absWorkingDir: root,
    });
    for (const file of ['index.html', 'favicon.svg'])
      copyFileSync(join(WEB_SOURCE_DIR, file), join(scratch, file));
    for (const file of ['app.js', 'app.css', 'index.html', 'favicon.svg'])
      renameSync(join(scratch, file), join(outDir, file));
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
