//! [`Listener`]: accepting connections, at most `max_connections` open at
//! once. Past that a new connection is closed at once and counted; an
//! accept that fails (out of file descriptors, say) is retried after a
//! pause that grows while it keeps failing, and logged at most once a
//! second, with how many failed.

use std::sync::Arc;
use std::time::{Duration, Instant};

use prometheus_client::metrics::gauge::Gauge;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::metrics::Metrics;

/// The first pause after a failed accept, and the longest.
const FIRST_PAUSE: Duration = Duration::from_millis(5);
const LONGEST_PAUSE: Duration = Duration::from_secs(1);
/// At most one log line about failed accepts per this long.
const LOG_EVERY: Duration = Duration::from_secs(1);

/// A listening socket and the bound on the connections it hands out.
pub(crate) struct Listener {
    listener: TcpListener,
    connections: Arc<Semaphore>,
    max_connections: usize,
    failures: Failures,
}

/// An accepted connection and its place among the open ones.
pub(crate) struct Accepted {
    pub stream: TcpStream,
    pub place: Place,
}

/// A connection's place among the open ones, given back when dropped.
pub(crate) struct Place {
    _permit: OwnedSemaphorePermit,
    open: Gauge,
}

impl Drop for Place {
    fn drop(&mut self) {
        self.open.dec();
    }
}

impl Listener {
    /// Hands out connections of `listener`, at most `max_connections` open.
    pub(crate) fn new(listener: TcpListener, max_connections: usize) -> Listener {
        Listener {
            listener,
            connections: Arc::new(Semaphore::new(max_connections.min(Semaphore::MAX_PERMITS))),
            max_connections,
            failures: Failures::default(),
        }
    }

    /// The next connection that may be served. Connections past the bound
    /// are closed here (and counted in `metrics`); failed accepts are
    /// waited out.
    pub(crate) async fn accept(&mut self, metrics: &Metrics) -> Accepted {
        loop {
            match self.listener.accept().await {
                Ok((stream, _)) => {
                    self.failures.ended();
                    match Arc::clone(&self.connections).try_acquire_owned() {
                        Ok(permit) => {
                            metrics.connections_open.inc();
                            let place = Place {
                                _permit: permit,
                                open: metrics.connections_open.clone(),
                            };
                            return Accepted { stream, place };
                        }
                        Err(_) => {
                            metrics.connections_refused.inc();
                            tracing::debug!(
                                "closed a connection: {} are open, the most allowed \
                                 (serve.max_connections)",
                                self.max_connections
                            );
                            drop(stream);
                        }
                    }
                }
                Err(error) => {
                    metrics.accept_errors.inc();
                    let pause = self.failures.failed(&error);
                    tokio::time::sleep(pause).await;
                }
            }
        }
    }
}

/// Accepts failing one after another: how long to pause, and when to log.
#[derive(Debug)]
struct Failures {
    /// Failures not logged yet.
    unlogged: u64,
    last_log: Option<Instant>,
    pause: Duration,
}

impl Default for Failures {
    fn default() -> Self {
        Failures {
            unlogged: 0,
            last_log: None,
            pause: FIRST_PAUSE,
        }
    }
}

impl Failures {
    /// One more failure: logs if a second has passed since the last line,
    /// and gives the pause before the next accept.
    fn failed(&mut self, error: &std::io::Error) -> Duration {
        self.unlogged += 1;
        let now = Instant::now();
        if self
            .last_log
            .is_none_or(|at| now.duration_since(at) >= LOG_EVERY)
        {
            tracing::warn!(
                "cannot accept connections ({} failed since the last report): {error}",
                self.unlogged
            );
            self.unlogged = 0;
            self.last_log = Some(now);
        }
        let pause = self.pause;
        self.pause = (self.pause * 2).min(LONGEST_PAUSE);
        pause
    }

    /// An accept worked: the next failure pauses briefly again.
    fn ended(&mut self) {
        self.pause = FIRST_PAUSE;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pauses_grow_to_a_second_and_start_over_after_an_accept() {
        let mut failures = Failures::default();
        let error = std::io::Error::from_raw_os_error(24);
        let pauses: Vec<Duration> = (0..10).map(|_| failures.failed(&error)).collect();
        assert_eq!(pauses[0], FIRST_PAUSE);
        assert_eq!(pauses[1], FIRST_PAUSE * 2);
        assert_eq!(*pauses.last().unwrap(), LONGEST_PAUSE);
        // Logged once (the first), the other nine wait for the next report.
        assert_eq!(failures.unlogged, 9);
        failures.ended();
        assert_eq!(failures.failed(&error), FIRST_PAUSE);
    }
}
