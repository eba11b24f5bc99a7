//! [`SessionId`]: the key that makes calls share state (see
//! [`ToolManager::session`](crate::ToolManager::session)).

use std::collections::hash_map::RandomState;
use std::fmt;
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// The longest session key accepted, in bytes.
pub const MAX_SESSION_ID_BYTES: usize = 256;

/// The key of a session: the calls that carry the same key run, in a
/// module that opted in (`sessions = true`), in that session's own
/// instance, so that state (variables, files) lives from one call to the
/// next; calls of other sessions, and calls without a key, never see it.
///
/// A key is 1 to [`MAX_SESSION_ID_BYTES`] visible ASCII characters (as an
/// MCP session id). [`SessionId::new`] makes a fresh one.
///
/// A key also remembers, in itself and every clone of it, where its
/// session's state was dropped (evicted, idle, `max_calls`) and not yet
/// told, so that its next call there is answered with an error saying so
/// instead of running on a fresh instance: the host keeps nothing for
/// sessions it no longer holds. Keep the key (or a clone) for as long as
/// its session lives; a key parsed again from the same text is equal to it
/// and reaches the same instance, but knows nothing of resets before it.
/// Equality, order and hashing read the text only, so a key is a sound map
/// key (clippy's `mutable_key_type` lint cannot see that).
///
/// ```
/// use toolhost::SessionId;
///
/// let a = SessionId::new();
/// assert_ne!(a, SessionId::new());
/// assert_eq!(SessionId::parse("chat-42").unwrap().as_str(), "chat-42");
/// assert!(SessionId::parse("with space").is_err());
/// ```
#[derive(Clone)]
pub struct SessionId {
    key: Arc<str>,
    resets: Arc<Resets>,
}

/// Why a session's state in a module was dropped between two of its calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SessionReset {
    /// To make room for a newer session: at most this many are kept.
    Evicted { max: u64 },
    /// It had no call for this many milliseconds.
    Idle { idle_ms: u64 },
    /// It had served this many calls (`max_calls`).
    MaxCalls { max_calls: u64 },
}

/// The resets of a session not yet told, by the number of the module
/// whose state was dropped: at most one per module the session used.
#[derive(Debug, Default)]
struct Resets(Mutex<Vec<(u64, SessionReset)>>);

impl Resets {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(u64, SessionReset)>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl SessionId {
    /// A key no other session of this process has: a random part and a
    /// counter.
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let mut hasher = RandomState::new().build_hasher();
        hasher.write_u64(n);
        let random = hasher.finish();
        Self::of(format!("s{random:016x}{n:x}").into())
    }

    fn of(key: Arc<str>) -> Self {
        Self {
            key,
            resets: Arc::default(),
        }
    }

    /// `text` as a key, if it is 1 to [`MAX_SESSION_ID_BYTES`] visible
    /// ASCII characters (`!` to `~`); the error says what is wrong.
    pub fn parse(text: &str) -> Result<Self, String> {
        if text.is_empty() {
            return Err("a session key is empty".into());
        }
        if text.len() > MAX_SESSION_ID_BYTES {
            return Err(format!(
                "a session key is {} bytes long; the limit is {MAX_SESSION_ID_BYTES}",
                text.len()
            ));
        }
        if let Some(bad) = text.chars().find(|c| !c.is_ascii_graphic()) {
            return Err(format!(
                "a session key holds {bad:?}; use visible ASCII characters only ('!' to '~')"
            ));
        }
        Ok(Self::of(text.into()))
    }

    /// The key as text.
    pub fn as_str(&self) -> &str {
        &self.key
    }

    /// The key as shared text.
    pub(crate) fn key(&self) -> &Arc<str> {
        &self.key
    }

    /// Notes that the session's state in module `module` was dropped, for
    /// `reason`, to tell its next call there.
    pub(crate) fn note_reset(&self, module: u64, reason: SessionReset) {
        let mut resets = self.resets.lock();
        resets.retain(|(m, _)| *m != module);
        resets.push((module, reason));
    }

    /// Takes the reset noted for module `module`, if there is one.
    pub(crate) fn take_reset(&self, module: u64) -> Option<SessionReset> {
        let mut resets = self.resets.lock();
        let index = resets.iter().position(|(m, _)| *m == module)?;
        Some(resets.swap_remove(index).1)
    }
}

impl PartialEq for SessionId {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}

impl Eq for SessionId {}

impl Hash for SessionId {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.key.hash(state);
    }
}

impl PartialOrd for SessionId {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for SessionId {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key.cmp(&other.key)
    }
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.key)
    }
}

impl fmt::Debug for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SessionId({:?})", &*self.key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    // Hashing reads the key's text only, never the resets behind the lock.
    #[allow(clippy::mutable_key_type)]
    fn keys_are_unique_and_checked() {
        let keys: std::collections::HashSet<_> = (0..1000).map(|_| SessionId::new()).collect();
        assert_eq!(keys.len(), 1000);
        for key in &keys {
            assert_eq!(SessionId::parse(key.as_str()).as_ref(), Ok(key));
        }
        assert!(SessionId::parse(&"a".repeat(256)).is_ok());
        assert!(
            SessionId::parse(&"a".repeat(257))
                .unwrap_err()
                .contains("257 bytes")
        );
        assert!(SessionId::parse("").unwrap_err().contains("empty"));
        assert!(
            SessionId::parse("a\nb")
                .unwrap_err()
                .contains("visible ASCII")
        );
        assert!(SessionId::parse("é").is_err());
    }

    #[test]
    fn a_key_and_its_clones_share_their_resets_and_no_other_key_does() {
        let a = SessionId::parse("k").unwrap();
        let clone = a.clone();
        let again = SessionId::parse("k").unwrap();
        assert_eq!(a, again);
        a.note_reset(1, SessionReset::Idle { idle_ms: 5 });
        a.note_reset(1, SessionReset::Evicted { max: 2 });
        a.note_reset(2, SessionReset::MaxCalls { max_calls: 3 });
        assert_eq!(again.take_reset(1), None);
        assert_eq!(clone.take_reset(1), Some(SessionReset::Evicted { max: 2 }));
        assert_eq!(a.take_reset(1), None, "told once");
        assert_eq!(
            a.take_reset(2),
            Some(SessionReset::MaxCalls { max_calls: 3 })
        );
    }
}
