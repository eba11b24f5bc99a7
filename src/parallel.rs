//! [`run_parallel`]: a job over many items on a few scoped threads, results
//! in order. Used to load modules and to answer batches of calls.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Runs `job` on every item with at most `max_parallel` threads, keeping order.
pub(crate) fn run_parallel<T, R, F>(items: &[T], max_parallel: usize, job: F) -> Vec<R>
where
    T: Sync,
    R: Send,
    F: Fn(&T) -> R + Sync,
{
    let workers = max_parallel.clamp(1, items.len().max(1));
    if workers == 1 {
        return items.iter().map(&job).collect();
    }
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    let result = job(item);
                    results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(result);
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .flatten()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallel_results_keep_their_order() {
        let items: Vec<u64> = (0..50).collect();
        let out = run_parallel(&items, 4, |x| x * 2);
        assert_eq!(out, items.iter().map(|x| x * 2).collect::<Vec<_>>());
        assert!(run_parallel(&Vec::<u64>::new(), 4, |x| *x).is_empty());
    }
}
