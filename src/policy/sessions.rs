//! [`SessionLimits`]: how many sessions are kept, and for how long
//! (`[sessions]`).

use serde::{Deserialize, Serialize};

use crate::settings::{Bounds, settings};

/// The most session instances `max` may allow.
const MOST_SESSIONS: u64 = 100_000;
/// The longest `idle_ms` accepted: a week.
const LONGEST_IDLE_MS: u64 = 7 * 24 * 3_600_000;

settings! {
    section "sessions";
    /// The bounds of the sessions of every module with sessions on
    /// (`[sessions]` in the config).
    ///
    /// A session keeps one instance per module it has called; `max` bounds
    /// those instances in all (the least recently used one is dropped for a
    /// new one), and one that has had no call for `idle_ms` is dropped. The
    /// next call of a session whose instance was dropped so is answered with
    /// an error saying its state was reset, and the call after that starts
    /// afresh.
    ///
    /// ```
    /// let limits = toolhost::SessionLimits::default();
    /// assert_eq!((limits.max, limits.idle_ms), (100, 600_000));
    /// assert!(limits.validate().is_ok());
    /// ```
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    pub struct SessionLimits {
        /// Session instances kept at once, in all modules.
        max: u64 = 100, Bounds::Between(1, MOST_SESSIONS);
        /// A session instance without a call for this long is dropped, in
        /// milliseconds.
        idle_ms: u64 = 600_000, Bounds::Between(1, LONGEST_IDLE_MS);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_checked() {
        let zero = SessionLimits {
            max: 0,
            ..SessionLimits::default()
        };
        assert_eq!(
            zero.validate().unwrap_err(),
            "[sessions]: `max` must be between 1 and 100000 (it is 0)"
        );
        let long = SessionLimits {
            idle_ms: LONGEST_IDLE_MS + 1,
            ..SessionLimits::default()
        };
        assert!(long.validate().unwrap_err().contains("`idle_ms`"));
        let parsed: SessionLimits = toml::from_str("max = 5").unwrap();
        assert_eq!(parsed.max, 5);
        assert_eq!(parsed.idle_ms, 600_000);
        assert!(toml::from_str::<SessionLimits>("maximum = 5").is_err());
    }
}
