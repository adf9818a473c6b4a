//! The one parallel map of the library: independent points (a sweep's chunks of samples, a
//! memory sweep's grid points, the energy study's cases, a workload's layers) run on a fixed
//! number of worker threads, their results in the order of the points whatever the order in
//! which they finish, so a result never depends on the thread count.
//!
//! Each worker takes the next point not yet taken; a point's function is called once, on
//! one thread, and may report progress itself (it is `Sync`). With one thread the points run
//! in order on the calling thread.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

/// How many worker threads a map runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Threads(usize);

impl Threads {
    /// `count` threads (at least 1).
    pub fn new(count: usize) -> Threads {
        Threads(count.max(1))
    }

    /// `count` threads when given, otherwise one per core of the machine (1 when that cannot
    /// be told).
    pub fn or_cores(count: Option<usize>) -> Threads {
        Threads::new(count.unwrap_or_else(|| {
            std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
        }))
    }

    /// The number of threads.
    pub fn get(self) -> usize {
        self.0
    }
}

/// `f` of every item of `items`, in the items' order, on `threads` threads (never more
/// threads than items).
pub fn par_map<T, R, F>(items: &[T], threads: Threads, f: F) -> Vec<R>
where
    T: Sync,
    R: Send,
    F: Fn(usize, &T) -> R + Sync,
{
    let result: Result<Vec<R>, std::convert::Infallible> =
        try_par_map(items, threads, |i, t| Ok(f(i, t)));
    match result {
        Ok(v) => v,
        Err(e) => match e {},
    }
}

/// `f` of every item of `items`, in the items' order, on `threads` threads, or the first
/// error: once an item fails no worker takes a further item, and of the items that failed the
/// error of the first in `items`' order is returned (with one thread, the first to fail).
pub fn try_par_map<T, R, E, F>(items: &[T], threads: Threads, f: F) -> Result<Vec<R>, E>
where
    T: Sync,
    R: Send,
    E: Send,
    F: Fn(usize, &T) -> Result<R, E> + Sync,
{
    let workers = threads.get().min(items.len());
    if workers <= 1 {
        return items.iter().enumerate().map(|(i, t)| f(i, t)).collect();
    }
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let slots: Mutex<Vec<Option<Result<R, E>>>> =
        Mutex::new(std::iter::repeat_with(|| None).take(items.len()).collect());
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                if failed.load(Ordering::SeqCst) {
                    break;
                }
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(item) = items.get(i) else { break };
                let r = f(i, item);
                if r.is_err() {
                    failed.store(true, Ordering::SeqCst);
                }
                slots.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
            });
        }
    });
    let slots = slots.into_inner().unwrap_or_else(|e| e.into_inner());
    let mut out = Vec::with_capacity(items.len());
    let mut first_error = None;
    for r in slots {
        match r {
            Some(Ok(v)) => out.push(v),
            Some(Err(e)) => {
                first_error = Some(e);
                break;
            }
            // Not taken: only after an error, which a later slot holds.
            None => {}
        }
    }
    match first_error {
        Some(e) => Err(e),
        None => Ok(out),
    }
}
