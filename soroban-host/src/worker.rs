//! Where host work runs: on a thread with a large stack (deep contract call chains recurse natively, as
//! stellar-rpc found), with every panic caught and turned into an error instead of unwinding into Node.
//! Ledger reads the work needs from JavaScript are asked of the calling thread, which waits in a loop
//! answering them, so the JavaScript callback always runs on its own thread.
//!
//! Threads are kept in an idle pool and reused (starting one costs more than a SAC transfer takes to
//! run); a call made while every thread is busy (a getEntry callback calling the host again) gets a
//! new one.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc;
use std::sync::Mutex;

const STACK_BYTES: usize = 64 * 1024 * 1024;

/// A ledger entry and its live-until ledger (`None` for entries without TTL).
pub type EntryXdr = (Vec<u8>, Option<u32>);
/// Answer to a read: the entry, or none, or why the read failed.
pub type ReadAnswer = Result<Option<EntryXdr>, String>;

/// The worker's side of the read channel.
pub struct Reader {
    ask: mpsc::Sender<Message>,
    answers: mpsc::Receiver<ReadAnswer>,
}

impl Reader {
    /// Reads the entry of `key` (LedgerKey XDR) from the caller's ledger.
    pub fn read(&self, key: Vec<u8>) -> ReadAnswer {
        self.ask
            .send(Message::Read(key))
            .map_err(|_| "the caller stopped answering reads".to_string())?;
        self.answers
            .recv()
            .map_err(|_| "the caller stopped answering reads".to_string())?
    }
}

enum Message {
    Read(Vec<u8>),
    Done,
}

type Job = Box<dyn FnOnce() + Send + 'static>;

/// An idle host thread, waiting for a job.
struct Worker {
    jobs: mpsc::Sender<Job>,
}

static IDLE: Mutex<Vec<Worker>> = Mutex::new(Vec::new());

fn start_worker() -> Result<Worker, String> {
    let (jobs, queue) = mpsc::channel::<Job>();
    std::thread::Builder::new()
        .name("soroban-host".into())
        .stack_size(STACK_BYTES)
        .spawn(move || {
            while let Ok(job) = queue.recv() {
                job();
            }
        })
        .map_err(|e| format!("could not start a host thread: {e}"))?;
    Ok(Worker { jobs })
}

/// Runs `job` on an idle host thread and returns once it has finished.
fn run_job<'a>(job: Box<dyn FnOnce() + Send + 'a>, wait: impl FnOnce()) -> Result<(), String> {
    let worker = IDLE.lock().unwrap_or_else(|p| p.into_inner()).pop();
    let worker = match worker {
        Some(w) => w,
        None => start_worker()?,
    };
    // SAFETY: the job may borrow from the caller's frame ('a). `wait` does not return before the job
    // has run to its end (the job signals completion as its last act, panics included, and the worker
    // runs nothing else meanwhile), so nothing it borrows is used after this function returns.
    let job: Job = unsafe { std::mem::transmute::<Box<dyn FnOnce() + Send + 'a>, Job>(job) };
    if let Err(mpsc::SendError(job)) = worker.jobs.send(job) {
        // The thread is gone (cannot happen: it loops until its sender drops). Do not run the job.
        drop(job);
        return Err("a host thread stopped".into());
    }
    wait();
    IDLE.lock().unwrap_or_else(|p| p.into_inner()).push(worker);
    Ok(())
}

/// Runs `work` on a host thread, answering its reads with `answer` on this thread.
pub fn run<R: Send>(
    work: impl FnOnce(Reader) -> Result<R, String> + Send,
    mut answer: impl FnMut(&[u8]) -> ReadAnswer,
) -> Result<R, String> {
    let (ask, asked) = mpsc::channel::<Message>();
    let (answer_tx, answers) = mpsc::channel::<ReadAnswer>();
    let (result_tx, result_rx) = mpsc::sync_channel::<std::thread::Result<Result<R, String>>>(1);
    let done = ask.clone();
    let job = move || {
        let result = catch_unwind(AssertUnwindSafe(|| work(Reader { ask, answers })));
        let _ = result_tx.send(result);
        // Last act: after this the job touches nothing the caller lent it.
        let _ = done.send(Message::Done);
    };
    run_job(Box::new(job), || {
        // Until Done (or the job is gone), answer reads.
        while let Ok(Message::Read(key)) = asked.recv() {
            let reply = catch_unwind(AssertUnwindSafe(|| answer(&key))).unwrap_or_else(|p| {
                Err(format!("reading the ledger panicked: {}", panic_text(&p)))
            });
            // The worker may have finished already (no longer listening): fine.
            let _ = answer_tx.send(reply);
        }
    })?;
    match result_rx.try_recv() {
        Ok(Ok(result)) => result,
        Ok(Err(panic)) => Err(format!("the Soroban host panicked: {}", panic_text(&panic))),
        Err(_) => Err("the host thread ended without a result".into()),
    }
}

/// Runs `work`, which reads nothing from the caller, on a host thread.
pub fn run_alone<R: Send>(work: impl FnOnce() -> Result<R, String> + Send) -> Result<R, String> {
    run(|_| work(), |_| Err("no reads expected".into()))
}

/// A panic raised on purpose (tests): reported like any other, but not printed by the panic hook.
struct DeliberatePanic(&'static str);

pub fn deliberate_panic(message: &'static str) -> ! {
    static QUIET: std::sync::Once = std::sync::Once::new();
    QUIET.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if info.payload().downcast_ref::<DeliberatePanic>().is_none() {
                previous(info);
            }
        }));
    });
    std::panic::panic_any(DeliberatePanic(message))
}

pub fn panic_text(p: &Box<dyn Any + Send>) -> String {
    if let Some(DeliberatePanic(s)) = p.downcast_ref::<DeliberatePanic>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else if let Some(s) = p.downcast_ref::<&'static str>() {
        (*s).to_string()
    } else {
        "unknown cause".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_are_answered_on_the_calling_thread() {
        let caller = std::thread::current().id();
        let r = run(
            |reader| {
                let a = reader.read(vec![1, 2])?;
                let b = reader.read(vec![3])?;
                Ok((a, b))
            },
            |key| {
                assert_eq!(std::thread::current().id(), caller);
                Ok(if key.len() == 2 {
                    Some((key.to_vec(), Some(9)))
                } else {
                    None
                })
            },
        )
        .unwrap();
        assert_eq!(r, (Some((vec![1, 2], Some(9))), None));
    }

    #[test]
    fn panics_become_errors() {
        let e = run_alone::<()>(|| panic!("boom {}", 7)).unwrap_err();
        assert!(e.contains("boom 7"), "{e}");
        let e = run(
            |reader| reader.read(vec![]).map(|_| ()),
            |_| panic!("reader boom"),
        )
        .unwrap_err();
        assert!(e.contains("reader boom"), "{e}");
        // the thread that panicked serves the next call
        assert_eq!(run_alone(|| Ok(7)).unwrap(), 7);
    }

    #[test]
    fn a_call_from_inside_a_read_gets_its_own_thread() {
        let borrowed = vec![5u8; 3];
        let r = run(
            |reader| reader.read(vec![0]).map(|a| a.map(|(v, _)| v)),
            |_| {
                let inner = run_alone(|| Ok(borrowed.len())).unwrap();
                Ok(Some((vec![inner as u8], None)))
            },
        )
        .unwrap();
        assert_eq!(r, Some(vec![3]));
    }
}
