//! [`Identity`]: who a keyless `[[trust]]` rule accepts as the signer of a
//! component, an exact certificate identity or a pattern it must match
//! whole.

use regex::Regex;

/// Who a keyless rule accepts.
#[derive(Debug, Clone)]
pub(super) enum Identity {
    /// Exactly this identity (`identity`).
    Exact(String),
    /// Any identity that `regex` matches whole (`identity_regexp`, as
    /// written in `source`).
    Regex { source: String, regex: Regex },
}

impl Identity {
    /// The identities `pattern` matches whole, or why it is not a valid
    /// regular expression.
    pub(super) fn pattern(pattern: &str) -> Result<Self, String> {
        let regex = regex::RegexBuilder::new(&format!("^(?:{pattern})$"))
            .size_limit(1 << 20)
            .build()
            .map_err(|e| format!("`identity_regexp` is not a valid regular expression: {e}"))?;
        Ok(Self::Regex {
            source: pattern.to_string(),
            regex,
        })
    }

    /// The one identity accepted, where the rule names one.
    pub(super) fn exact(&self) -> Option<&str> {
        match self {
            Self::Exact(exact) => Some(exact),
            Self::Regex { .. } => None,
        }
    }

    /// Whether `signer` matches the rule's pattern; the error says why
    /// not. An exact identity is not checked here: the verifier is asked
    /// for it ([`Identity::exact`]).
    pub(super) fn check_pattern(&self, signer: &str) -> Result<(), String> {
        match self {
            Self::Regex { source, regex } if !regex.is_match(signer) => Err(format!(
                "signed by '{signer}', which does not match identity_regexp '{source}' (wrong identity)"
            )),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_matches_the_whole_identity() {
        let identity = Identity::pattern("dev@example\\.com|ci@.*").unwrap();
        assert!(identity.check_pattern("dev@example.com").is_ok());
        assert!(identity.check_pattern("ci@example.org").is_ok());
        let wrong = identity.check_pattern("evil-dev@example.com").unwrap_err();
        assert!(wrong.contains("does not match identity_regexp"), "{wrong}");
        assert_eq!(identity.exact(), None);
    }

    #[test]
    fn an_exact_identity_is_asked_of_the_verifier() {
        let identity = Identity::Exact("dev@example.com".into());
        assert_eq!(identity.exact(), Some("dev@example.com"));
        assert!(identity.check_pattern("anyone@example.org").is_ok());
    }

    #[test]
    fn a_bad_pattern_says_so() {
        let error = Identity::pattern("(").unwrap_err();
        assert!(error.contains("not a valid regular expression"), "{error}");
    }
}
