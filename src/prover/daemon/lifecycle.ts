// The daemon's lifecycle after start: the set of in-flight requests (each with its own abort
// controller), and stopping. A graceful stop reports NOT_SERVING, refuses new calls and lets admitted
// ones finish (drain); a forced stop (or a second, forced call during a drain) answers every in-flight
// call UNAVAILABLE at once (abandon), so clients retry on another daemon.
import type * as grpc from '@grpc/grpc-js';
import { unavailable } from './errors.ts';

export class InFlight {
  readonly #active = new Set<AbortController>();

  /** A controller for one request, aborted with `signal`'s reason and by abandon(); call release() at the end. */
  track(signal: AbortSignal): { signal: AbortSignal; release(): void } {
    const controller = new AbortController();
    const forward = () => controller.abort(signal.reason);
    signal.addEventListener('abort', forward, { once: true });
    this.#active.add(controller);
    return {
      signal: controller.signal,
      release: () => {
        this.#active.delete(controller);
        signal.removeEventListener('abort', forward);
      },
    };
  }

  /** Answers every in-flight call UNAVAILABLE (clients retry those on another daemon). */
  abandon(): void {
    for (const controller of this.#active)
      controller.abort(unavailable('prover daemon stopped; retry on another daemon'));
  }
}

export interface StopParts {
  server: grpc.Server;
  inFlight: InFlight;
  /** Reports NOT_SERVING and ends health watches. */
  closeHealth(): void;
  /** Settles when loading ended; stopping waits for it before releasing resources. */
  loaded(): Promise<void>;
  /** Closes the witness pool, the engine and the metrics endpoint, in that order. */
  release(): Promise<void>;
}

/** stop({ force }) for the daemon: the first call starts the stop, later calls join it. */
export function stopper(parts: StopParts): {
  stop(options?: { force?: boolean }): Promise<void>;
  readonly stopping: boolean;
} {
  let stopping: Promise<void> | undefined;
  return {
    get stopping() {
      return stopping !== undefined;
    },
    stop(options: { force?: boolean } = {}): Promise<void> {
      if (stopping) {
        // A forced stop during a graceful drain ends the drain.
        if (options.force) parts.inFlight.abandon();
        return stopping;
      }
      stopping = (async () => {
        parts.closeHealth();
        if (options.force) parts.inFlight.abandon();
        // Graceful: no new calls; admitted ones finish. After a force, the calls end as soon as their
        // UNAVAILABLE answers are sent; connections are cut only if that does not happen.
        const cut = options.force ? setTimeout(() => parts.server.forceShutdown(), 2_000) : undefined;
        await new Promise<void>((resolve) => parts.server.tryShutdown(() => resolve()));
        clearTimeout(cut);
        await parts.loaded().catch(() => undefined);
        await parts.release();
      })();
      return stopping;
    },
  };
}
