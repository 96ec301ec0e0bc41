// The life of one gRPC call as an AbortSignal: it fires when the caller cancels or the call's deadline
// passes, with the ProverError (CANCELLED or DEADLINE_EXCEEDED) to answer with.
import type * as grpc from '@grpc/grpc-js';
import { cancelled, deadlineExceeded } from './errors.ts';

/** A cancellation this close to the deadline is the deadline. */
const DEADLINE_SLACK_MS = 50;

/** An AbortSignal that fires when the caller cancels or its deadline passes; `done` releases the timers. */
export function callSignal(call: grpc.ServerUnaryCall<unknown, unknown>): {
  signal: AbortSignal;
  done(): void;
} {
  const controller = new AbortController();
  const deadline = call.getDeadline();
  const at = deadline instanceof Date ? deadline.getTime() : deadline;
  const expire = () =>
    controller.abort(
      deadlineExceeded('the deadline passed before the proof was ready; the work was dropped'),
    );
  // grpc-js ends a call at its deadline with its own timer and reports that as a cancellation too; timers
  // can fire a few ms before Date.now() reaches the deadline, hence the slack.
  const onCancelled = () =>
    Date.now() >= at - DEADLINE_SLACK_MS
      ? expire()
      : controller.abort(cancelled('the caller cancelled the request'));
  call.on('cancelled', onCancelled);
  let timer: NodeJS.Timeout | undefined;
  if (Number.isFinite(at)) {
    const remaining = at - Date.now();
    if (remaining <= 0) expire();
    else timer = setTimeout(expire, remaining);
  }
  if (call.cancelled) onCancelled();
  return {
    signal: controller.signal,
    done() {
      if (timer) clearTimeout(timer);
      call.removeListener('cancelled', onCancelled);
    },
  };
}
