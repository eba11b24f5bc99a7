//! Progress for a call whose request carries a `progressToken`: a
//! `notifications/progress` when the call starts, one every
//! [`PROGRESS_INTERVAL`] while it runs and one when it ends, so that a
//! client that resets its timeout on progress keeps waiting for a long
//! call. The progress is the call's running time in seconds (it only
//! grows); there is no total, since toolhost cannot know how long a tool
//! will take. One call sends at most one notification per interval.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::Peer;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::RoleServer;
use tokio::task::JoinHandle;

/// How often a running call reports progress.
pub(crate) const PROGRESS_INTERVAL: Duration = Duration::from_secs(1);

/// The progress notifications of one call, sent until it is finished.
pub(crate) struct CallProgress {
    peer: Peer<RoleServer>,
    token: ProgressToken,
    clock: Arc<Clock>,
    ticker: JoinHandle<()>,
}

impl CallProgress {
    /// Starts reporting the progress of tool `tool`'s call to `peer` under
    /// `token`: at once, then every [`PROGRESS_INTERVAL`].
    pub(crate) fn start(peer: Peer<RoleServer>, token: ProgressToken, tool: &str) -> Self {
        let clock = Arc::new(Clock {
            tool: tool.to_string(),
            started: Instant::now(),
            last: Mutex::new(None),
        });
        let ticker = {
            let (peer, token, clock) = (peer.clone(), token.clone(), Arc::clone(&clock));
            tokio::spawn(async move {
                let mut ticks = tokio::time::interval(PROGRESS_INTERVAL);
                ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                loop {
                    ticks.tick().await;
                    let note = clock.notification(&token, "running");
                    if peer.notify_progress(note).await.is_err() {
                        return;
                    }
                }
            })
        };
        Self {
            peer,
            token,
            clock,
            ticker,
        }
    }

    /// Stops the ticks and reports the call's end (before its result is
    /// sent, while the token is still the client's).
    pub(crate) async fn finish(self) {
        self.ticker.abort();
        let _ = self.ticker.await;
        let note = self.clock.notification(&self.token, "finished");
        // Bounded, like everything the result waits for.
        let _ = tokio::time::timeout(PROGRESS_INTERVAL, self.peer.notify_progress(note)).await;
    }
}

/// A call's running time, as progress that only grows.
struct Clock {
    tool: String,
    started: Instant,
    /// The progress last reported.
    last: Mutex<Option<f64>>,
}

impl Clock {
    /// The next notification: the seconds since the call started, in
    /// thousandths, and always more than the last one reported.
    fn notification(&self, token: &ProgressToken, state: &str) -> ProgressNotificationParam {
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        let mut progress = (self.started.elapsed().as_secs_f64() * 1000.0).floor() / 1000.0;
        if let Some(before) = *last
            && progress <= before
        {
            progress = before + 0.001;
        }
        *last = Some(progress);
        ProgressNotificationParam::new(token.clone(), progress).with_message(format!(
            "tool '{}' {state} after {progress:.1} s",
            self.tool
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_only_grows() {
        let clock = Clock {
            tool: "t".into(),
            started: Instant::now(),
            last: Mutex::new(None),
        };
        let token = ProgressToken(rmcp::model::NumberOrString::Number(1));
        let values: Vec<f64> = (0..5)
            .map(|_| clock.notification(&token, "running").progress)
            .collect();
        assert!(values.windows(2).all(|w| w[1] > w[0]), "{values:?}");
        let note = clock.notification(&token, "finished");
        assert!(
            note.message
                .as_deref()
                .unwrap()
                .starts_with("tool 't' finished after ")
        );
    }
}
