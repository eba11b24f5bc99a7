//! The answer to a call of a name that is not an active tool: what is
//! available, closest first when the list is long, and a guess.
//!
//! The text is small whatever the registry holds: at most
//! [`MAX_LISTED`] names, and the unknown name cut to [`MAX_ECHOED`] bytes.

use crate::names;

/// The most names listed after `Available:`.
pub(crate) const MAX_LISTED: usize = 20;
/// The most bytes of the unknown name repeated in the answer.
pub(crate) const MAX_ECHOED: usize = 128;

/// The active tool names, sorted, with what ranking them needs; made once
/// for a whole batch of calls.
pub(crate) struct ActiveNames<'a> {
    sorted: Vec<&'a str>,
    /// The character pairs of each name of `sorted`, for a cheap first rank.
    pairs: Vec<u64>,
}

impl<'a> ActiveNames<'a> {
    /// The names `active`, in any order.
    pub(crate) fn new(mut active: Vec<&'a str>) -> Self {
        active.sort_unstable();
        let pairs = active.iter().map(|name| pairs(name)).collect();
        Self {
            sorted: active,
            pairs,
        }
    }

    /// `unknown tool 'NAME'. Available: ...` for `name`.
    ///
    /// Up to [`MAX_LISTED`] active names are listed in alphabetical order; a
    /// longer list gives the [`MAX_LISTED`] closest to `name` (fewest
    /// edits), closest first, then `... and N more`. When exactly one active
    /// tool has `name` as its module-local part, the answer asks whether
    /// that was meant.
    pub(crate) fn unknown_tool_message(&self, name: &str) -> String {
        let echoed = cut(name, MAX_ECHOED);
        let available = if self.sorted.is_empty() {
            "(none)".to_string()
        } else if self.sorted.len() <= MAX_LISTED {
            self.sorted.join(", ")
        } else {
            self.closest_first(echoed)
        };
        let shown = if echoed.len() < name.len() {
            format!("{echoed}...")
        } else {
            name.to_string()
        };
        let mut message = format!("unknown tool '{shown}'. Available: {available}.");
        let guesses: Vec<&&str> = self
            .sorted
            .iter()
            .filter(|n| names::split_exposed(n).is_some_and(|(_, local)| local == name))
            .collect();
        if let [only] = guesses.as_slice() {
            message.push_str(&format!(" Did you mean '{only}'?"));
        }
        message
    }

    /// The [`MAX_LISTED`] names closest to `name`, then how many more.
    ///
    /// Edit distance costs up to 64×64 steps a name, too much to run over a
    /// large registry for every unknown call of a batch; a cheap score
    /// (shared character pairs) picks a shortlist first, and only that is
    /// ranked by edits.
    fn closest_first(&self, name: &str) -> String {
        let name = cut(name, names::MAX_EXPOSED_NAME_LEN);
        let wanted = pairs(name);
        let mut shortlist: Vec<(u32, usize)> = self
            .pairs
            .iter()
            .enumerate()
            .map(|(i, candidate)| (u32::MAX - (wanted & candidate).count_ones(), i))
            .collect();
        if shortlist.len() > SHORTLIST {
            shortlist.select_nth_unstable(SHORTLIST);
            shortlist.truncate(SHORTLIST);
        }
        let mut ranked: Vec<(usize, &str)> = shortlist
            .iter()
            .map(|(_, i)| (distance(name, self.sorted[*i]), self.sorted[*i]))
            .collect();
        ranked.sort_unstable();
        let listed: Vec<&str> = ranked.iter().take(MAX_LISTED).map(|(_, n)| *n).collect();
        format!(
            "{} ... and {} more",
            listed.join(", "),
            self.sorted.len() - listed.len()
        )
    }
}

/// How many names the cheap score keeps for ranking by edits.
const SHORTLIST: usize = 2 * MAX_LISTED;

/// The character pairs of `text`, hashed into 64 bits.
fn pairs(text: &str) -> u64 {
    text.as_bytes().windows(2).fold(0, |bits, pair| {
        bits | 1 << ((usize::from(pair[0]) * 31 + usize::from(pair[1])) % 64)
    })
}

/// How far `candidate` is from `name`: edits to the whole name, or to its
/// module-local part if that is closer.
fn distance(name: &str, candidate: &str) -> usize {
    let whole = strsim::levenshtein(name, candidate);
    let local = names::split_exposed(candidate)
        .map_or(usize::MAX, |(_, local)| strsim::levenshtein(name, local));
    whole.min(local)
}

/// `text` cut at a char boundary to at most `limit` bytes.
fn cut(text: &str, limit: usize) -> &str {
    if text.len() <= limit {
        return text;
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_lists_are_alphabetical_and_whole() {
        let message =
            ActiveNames::new(vec!["json_query", "calc_evaluate"]).unknown_tool_message("evaluate");
        assert_eq!(
            message,
            "unknown tool 'evaluate'. Available: calc_evaluate, json_query. Did you mean 'calc_evaluate'?"
        );
        assert_eq!(
            ActiveNames::new(Vec::new()).unknown_tool_message("x"),
            "unknown tool 'x'. Available: (none)."
        );
    }

    #[test]
    fn long_lists_are_cut_to_the_closest() {
        let names: Vec<String> = (0..1000).map(|i| format!("mod_tool{i:04}")).collect();
        let active: Vec<&str> = names.iter().map(String::as_str).collect();
        let message = ActiveNames::new(active).unknown_tool_message("tool0042");
        assert!(
            message.starts_with("unknown tool 'tool0042'. Available: mod_tool0042, "),
            "{message}"
        );
        assert!(
            message.ends_with(" ... and 980 more. Did you mean 'mod_tool0042'?"),
            "{message}"
        );
        assert_eq!(message.matches("mod_tool").count(), MAX_LISTED + 1);
    }

    #[test]
    fn long_names_are_cut() {
        let name = "é".repeat(1000);
        let message = ActiveNames::new(vec!["a_b"]).unknown_tool_message(&name);
        assert!(message.len() < MAX_ECHOED + 100, "{}", message.len());
        assert!(message.starts_with(&format!("unknown tool '{}...'", "é".repeat(64))));
    }
}
