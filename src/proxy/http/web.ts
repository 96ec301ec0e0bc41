// Serves the wallet page built from web/ (build/web: index.html, app.js, app.css, favicon.svg) at GET /,
// /app.js, /app.css and /favicon.svg, with a strict Content-Security-Policy: scripts and styles only from these files (no inline code),
// requests only to the proxy itself and, on the sandbox, its friendbot.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Context, Next } from 'koa';
import { ProblemError } from '../../api/problem.ts';

export const DEFAULT_WEB_DIR = fileURLToPath(new URL('../../../build/web', import.meta.url));

const FILES: Record<string, { file: string; type: string }> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/index.html': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/app.css': { file: 'app.css', type: 'text/css; charset=utf-8' },
  '/favicon.svg': { file: 'favicon.svg', type: 'image/svg+xml' },
};

export interface WebOptions {
  /** Folder with the built page (default build/web). */
  dir?: string;
  /** Other origins the page may call (the sandbox friendbot), besides the proxy itself. */
  connectOrigins?: string[];
}

export function contentSecurityPolicy(connectOrigins: string[]): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    `connect-src ${["'self'", ...connectOrigins].join(' ')}`,
    "img-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

export function webMiddleware(options: WebOptions = {}) {
  const dir = options.dir ?? DEFAULT_WEB_DIR;
  const csp = contentSecurityPolicy(options.connectOrigins ?? []);
  const cache = new Map<string, Buffer>();
  return async (ctx: Context, next: Next): Promise<void> => {
    const entry = FILES[ctx.path];
    if (entry === undefined || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return next();
    let content = cache.get(entry.file);
    if (content === undefined) {
      try {
        content = await readFile(join(dir, entry.file));
      } catch {
        throw new ProblemError(
          'service_unavailable',
          'the wallet page is not built on this server: run `npm run build`',
        );
      }
      cache.set(entry.file, content);
    }
    ctx.set('Content-Security-Policy', csp);
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('Cross-Origin-Opener-Policy', 'same-origin');
    ctx.set('X-Frame-Options', 'DENY');
    ctx.type = entry.type;
    ctx.body = content;
  };
}
