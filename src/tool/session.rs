//! [`SessionId`]: the key that makes calls share state (see
//! [`ToolManager::session`](crate::ToolManager::session)).

use std::collections::hash_map::RandomState;
use std::fmt;
use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

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
/// ```
/// use toolhost::SessionId;
///
/// let a = SessionId::new();
/// assert_ne!(a, SessionId::new());
/// assert_eq!(SessionId::parse("chat-42").unwrap().as_str(), "chat-42");
/// assert!(SessionId::parse("with space").is_err());
/// ```
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionId(Arc<str>);

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
        Self(format!("s{random:016x}{n:x}").into())
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
        Ok(Self(text.into()))
    }

    /// The key as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SessionId({:?})", &*self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
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
}
