// Types of compile.js (src/ → dist/), for the build script and the tests that import it.
export interface SourceDirs {
  /** the TypeScript sources */
  src: string;
  /** where their JavaScript goes, mirroring `src` */
  dist: string;
}

/** The stamp of the sources as they are now (their paths, sizes and modification times). */
export function sourceStamp(dirs?: SourceDirs): string;

/** Compiles `dirs.src` (default src/) into `dirs.dist` (default dist/) unless already compiled from them as they are. */
export function ensureCompiled(dirs?: SourceDirs): Promise<{ files: number; written: number } | undefined>;
