//! Records parsed on several threads, handed back in the order they were read: the
//! reader splits the file (lines, HAR entries) into batches, each batch is parsed on a
//! worker, and the reader takes the parsed batches back oldest first, so what follows
//! (the log's order, its keys, the partitions) sees the file as one thread reads it.
//!
//! Batch `k` goes to worker `k mod T` and comes back on that worker's channel: each
//! worker answers in the order it was given, so no batch is ever reordered. At most
//! [`IN_FLIGHT`] batches per worker are out at once: the memory read ahead is bounded.

use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

/// Batches a worker may hold (queued or being parsed) before the reader waits.
const IN_FLIGHT: usize = 3;

/// Workers parsing batches of `I` into `O`, answered in the order given.
pub struct Ordered<I, O> {
    jobs: Vec<SyncSender<I>>,
    done: Vec<Receiver<O>>,
    handles: Vec<JoinHandle<()>>,
    sent: usize,
    taken: usize,
}

impl<I: Send + 'static, O: Send + 'static> Ordered<I, O> {
    /// `threads` workers, each applying `parse`.
    pub fn new(threads: usize, parse: impl Fn(I) -> O + Send + Clone + 'static) -> Self {
        let (mut jobs, mut done, mut handles) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..threads.max(1) {
            let (tx, rx) = sync_channel::<I>(IN_FLIGHT);
            let (out_tx, out_rx) = sync_channel::<O>(IN_FLIGHT);
            let parse = parse.clone();
            handles.push(std::thread::spawn(move || {
                while let Ok(job) = rx.recv() {
                    if out_tx.send(parse(job)).is_err() {
                        return;
                    }
                }
            }));
            jobs.push(tx);
            done.push(out_rx);
        }
        Ordered {
            jobs,
            done,
            handles,
            sent: 0,
            taken: 0,
        }
    }

    /// Hands `job` over; when every worker has its fill, first takes back the oldest
    /// batch parsed (`Some`), which the caller handles before reading on.
    pub fn send(&mut self, job: I) -> Result<Option<O>, String> {
        let oldest = if self.sent - self.taken >= IN_FLIGHT * self.jobs.len() {
            self.next()?
        } else {
            None
        };
        let w = self.sent % self.jobs.len();
        self.jobs[w].send(job).map_err(|_| stopped())?;
        self.sent += 1;
        Ok(oldest)
    }

    /// The oldest batch not taken back yet (`None`: every batch was).
    pub fn next(&mut self) -> Result<Option<O>, String> {
        if self.taken == self.sent {
            return Ok(None);
        }
        let w = self.taken % self.done.len();
        let parsed = self.done[w].recv().map_err(|_| stopped())?;
        self.taken += 1;
        Ok(Some(parsed))
    }
}

impl<I, O> Drop for Ordered<I, O> {
    /// Stops the workers: their queues close, what they still parse is dropped.
    fn drop(&mut self) {
        self.jobs.clear();
        self.done.clear();
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
    }
}

fn stopped() -> String {
    "a parser of the log stopped unexpectedly".to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_come_back_in_the_order_given() {
        let mut pool = Ordered::new(3, |n: u64| {
            // Later batches finish sooner: the order must not follow the finish.
            std::thread::sleep(std::time::Duration::from_millis(20 - n % 20));
            n * 2
        });
        let mut got = Vec::new();
        for n in 0..40 {
            got.extend(pool.send(n).unwrap());
        }
        while let Some(x) = pool.next().unwrap() {
            got.push(x);
        }
        assert_eq!(got, (0..40).map(|n| n * 2).collect::<Vec<_>>());
    }
}
