//! The settings a reload does not apply: those read once, when the runtime
//! or the server starts (`[serve]`, `[pool]`, `[resolver]`, `[cache]`).

use serde::Serialize;

use super::format::Config;

/// One setting whose value in the config differs from the one in use, and
/// that takes effect only on a restart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestartSetting {
    /// The key, with its section: `[serve] max_calls_in_flight`.
    pub key: String,
    /// The value in use, as TOML (`(not set)` when absent).
    pub running: String,
    /// The value the config now has.
    pub written: String,
}

/// Written for a key a section leaves out.
const NOT_SET: &str = "(not set)";

impl Config {
    /// The settings of `written` that differ from this config's (the one in
    /// use) and need a restart to apply, in section and key order.
    pub fn settings_needing_restart(&self, written: &Config) -> Vec<RestartSetting> {
        let sections = [
            ("serve", table(&self.serve), table(&written.serve)),
            ("pool", table(&self.pool), table(&written.pool)),
            ("resolver", table(&self.resolver), table(&written.resolver)),
            ("cache", table(&self.cache), table(&written.cache)),
        ];
        let mut changed = Vec::new();
        for (section, running, now) in sections {
            let mut keys: Vec<&String> = running.keys().chain(now.keys()).collect();
            keys.sort();
            keys.dedup();
            for key in keys {
                let (before, after) = (running.get(key), now.get(key));
                if before != after {
                    changed.push(RestartSetting {
                        key: format!("[{section}] {key}"),
                        running: shown(before),
                        written: shown(after),
                    });
                }
            }
        }
        changed
    }
}

/// A section's keys and values (empty if it cannot be written as TOML,
/// which the derived serializers never fail at).
fn table(section: &impl Serialize) -> toml::Table {
    toml::Table::try_from(section).unwrap_or_default()
}

fn shown(value: Option<&toml::Value>) -> String {
    value.map_or_else(|| NOT_SET.to_string(), ToString::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_changed_key_of_the_start_time_sections_is_named() {
        let running = Config::from_toml("[serve]\nmax_calls_in_flight = 8\n").unwrap();
        let written = Config::from_toml(
            "[serve]\nmax_calls_in_flight = 3\nallowed_origins = [\"https://a.example\"]\n\
             [pool]\nmemory_reset = \"full\"\n[cache]\ndir = \"c\"\n\
             [resolver]\nname_servers = [\"127.0.0.53:53\"]\n[limits]\nfuel = 5\n",
        )
        .unwrap();
        let changed = running.settings_needing_restart(&written);
        let keys: Vec<&str> = changed.iter().map(|c| c.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "[serve] allowed_origins",
                "[serve] max_calls_in_flight",
                "[pool] memory_reset",
                "[resolver] name_servers",
                "[cache] dir",
            ]
        );
        assert_eq!(changed[1].running, "8");
        assert_eq!(changed[1].written, "3");
        assert_eq!(changed[2].written, "\"full\"");
        assert_eq!(changed[4].running, NOT_SET);
        assert!(written.settings_needing_restart(&written).is_empty());
    }
}
