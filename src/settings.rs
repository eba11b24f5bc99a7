//! [`settings!`]: a config section (`[pool]`, `[serve]`, `[sessions]`)
//! written once, as one table of keys. Each row gives a key, its type, its
//! default, its [`Bounds`] and its doc comment; the macro generates the
//! struct (`serde(default, deny_unknown_fields)`), its `Default`, its
//! `validate()` and its `specs()`, the list the docs test reads.

use std::fmt;

use serde::Serialize;

/// The values a setting accepts, and the error text of one it does not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bounds {
    /// Any value of its type.
    Any,
    /// A number greater than 0.
    Positive,
    /// A number from 0 to this.
    AtMost(u64),
    /// A number from the first to the second, both included.
    Between(u64, u64),
}

impl Bounds {
    /// Whether `number` is within these bounds.
    pub fn admits(self, number: u64) -> bool {
        match self {
            Bounds::Any => true,
            Bounds::Positive => number > 0,
            Bounds::AtMost(most) => number <= most,
            Bounds::Between(least, most) => (least..=most).contains(&number),
        }
    }

    /// What a value out of these bounds is told, for `[section]`'s `key`.
    fn refusal(self, section: &str, key: &str, number: u64) -> String {
        let must = match self {
            Bounds::Any => "be a value of its type".to_string(),
            Bounds::Positive => return format!("[{section}]: `{key}` must be greater than 0"),
            Bounds::AtMost(most) => format!("be at most {most}"),
            Bounds::Between(least, most) => format!("be between {least} and {most}"),
        };
        format!("[{section}]: `{key}` must {must} (it is {number})")
    }
}

/// As the reference's tables write a range: `1..10000`, `0..64`, `1..`
/// (nothing for [`Bounds::Any`]).
impl fmt::Display for Bounds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Bounds::Any => Ok(()),
            Bounds::Positive => f.write_str("1.."),
            Bounds::AtMost(most) => write!(f, "0..{most}"),
            Bounds::Between(least, most) => write!(f, "{least}..{most}"),
        }
    }
}

/// One key of a section: its name, default, bounds and doc comment.
#[derive(Debug, Clone, PartialEq)]
pub struct SettingSpec {
    section: &'static str,
    key: &'static str,
    default: toml::Value,
    bounds: Bounds,
    doc: &'static str,
}

impl SettingSpec {
    /// The spec of `[section]`'s `key`, whose default is `default`.
    pub fn new<T: Serialize>(
        section: &'static str,
        key: &'static str,
        default: &T,
        bounds: Bounds,
        doc: &'static str,
    ) -> Self {
        // The settings' types are numbers, booleans, strings, enums of
        // strings and lists of strings: each is a TOML value.
        let default = toml::Value::try_from(default)
            .unwrap_or_else(|e| toml::Value::String(format!("<not a TOML value: {e}>")));
        Self {
            section,
            key,
            default,
            bounds,
            doc,
        }
    }

    /// The section, as the config writes it without brackets: `pool`.
    pub fn section(&self) -> &'static str {
        self.section
    }

    /// The key: `instances`.
    pub fn key(&self) -> &'static str {
        self.key
    }

    /// The default, as a TOML value.
    pub fn default_value(&self) -> &toml::Value {
        &self.default
    }

    /// The values accepted.
    pub fn bounds(&self) -> Bounds {
        self.bounds
    }

    /// The doc comment, its lines joined into one paragraph.
    pub fn doc(&self) -> String {
        self.doc.split_whitespace().collect::<Vec<_>>().join(" ")
    }
}

/// Checks `[section]`'s `key`, whose value is `value`, against `bounds`.
pub fn check<T: Serialize>(
    section: &str,
    key: &str,
    value: &T,
    bounds: Bounds,
) -> Result<(), String> {
    if bounds == Bounds::Any {
        return Ok(());
    }
    let number = toml::Value::try_from(value)
        .ok()
        .and_then(|v| v.as_integer())
        .and_then(|n| u64::try_from(n).ok());
    match number {
        Some(n) if bounds.admits(n) => Ok(()),
        Some(n) => Err(bounds.refusal(section, key, n)),
        None => Err(format!(
            "[{section}]: `{key}` must be a number from {bounds}"
        )),
    }
}

/// Declares a config section once: `section "NAME";`, the struct's
/// attributes and name, then one row per key,
/// `/// doc` `key: Type = default, bounds;`. Generates the struct (public
/// fields, `serde(default, deny_unknown_fields)`), `Default`, `validate()`
/// (each key against its bounds, in order; the error names the section
/// and key) and `specs()` (each key's [`SettingSpec`], in order).
macro_rules! settings {
    (
        section $section:literal;
        $(#[$meta:meta])*
        pub struct $name:ident {
            $($(#[doc = $doc:literal])* $key:ident: $ty:ty = $default:expr, $bounds:expr;)*
        }
    ) => {
        $(#[$meta])*
        #[serde(default, deny_unknown_fields)]
        pub struct $name {
            $($(#[doc = $doc])* pub $key: $ty,)*
        }

        impl Default for $name {
            fn default() -> Self {
                Self { $($key: $default,)* }
            }
        }

        impl $name {
            /// The section's name in the config, without brackets.
            pub const SECTION: &'static str = $section;

            /// Each key: its default, the values it accepts and its doc, in
            /// the order of the struct.
            pub fn specs() -> Vec<$crate::settings::SettingSpec> {
                let defaults = Self::default();
                vec![$($crate::settings::SettingSpec::new(
                    $section,
                    stringify!($key),
                    &defaults.$key,
                    $bounds,
                    concat!($($doc, "\n",)* ""),
                ),)*]
            }

            /// Checks every key is within its bounds; the error names the
            /// section and the key.
            pub fn validate(&self) -> Result<(), String> {
                $($crate::settings::check($section, stringify!($key), &self.$key, $bounds)?;)*
                Ok(())
            }
        }
    };
}

pub(crate) use settings;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_refuse_with_the_section_and_key() {
        assert_eq!(
            check("pool", "instances", &0u32, Bounds::Between(1, 10)),
            Err("[pool]: `instances` must be between 1 and 10 (it is 0)".to_string())
        );
        assert_eq!(
            check("pool", "ready_total", &11u64, Bounds::AtMost(10)),
            Err("[pool]: `ready_total` must be at most 10 (it is 11)".to_string())
        );
        assert_eq!(
            check("serve", "page_size", &0u64, Bounds::Positive),
            Err("[serve]: `page_size` must be greater than 0".to_string())
        );
        assert_eq!(check("pool", "enabled", &true, Bounds::Any), Ok(()));
        assert_eq!(
            check("pool", "instances", &10u32, Bounds::Between(1, 10)),
            Ok(())
        );
        assert!(
            check("pool", "instances", &"many", Bounds::Positive)
                .unwrap_err()
                .contains("must be a number from 1..")
        );
    }

    /// `T`'s specs follow its struct (keys in order, defaults), its
    /// defaults pass, and each bounded key just past its bounds is refused
    /// with a text that names the section and the key.
    fn check_section<T>(
        section: &str,
        specs: Vec<SettingSpec>,
        validate: fn(&T) -> Result<(), String>,
    ) where
        T: Default + Serialize + serde::de::DeserializeOwned,
    {
        let defaults = toml::Table::try_from(T::default()).unwrap();
        let keys: Vec<&str> = specs.iter().map(|s| s.key()).collect();
        // serde_json keeps the fields' order.
        let json = serde_json::to_value(T::default()).unwrap();
        let fields: Vec<&str> = json
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys, fields, "[{section}]");
        for spec in &specs {
            assert_eq!(spec.section(), section);
            assert_eq!(Some(spec.default_value()), defaults.get(spec.key()));
            assert!(!spec.doc().is_empty(), "`{}` has its doc", spec.key());
        }
        validate(&T::default()).unwrap();
        for spec in &specs {
            let past = match spec.bounds() {
                Bounds::Any => continue,
                Bounds::Positive => 0,
                Bounds::AtMost(most) | Bounds::Between(_, most) => most + 1,
            };
            let mut table = defaults.clone();
            let past = i64::try_from(past).unwrap();
            table.insert(spec.key().to_string(), toml::Value::Integer(past));
            // A number past a u32 field's range is refused by serde already.
            let Ok(value) = table.try_into::<T>() else {
                continue;
            };
            let refused = validate(&value).unwrap_err();
            let named = format!("[{section}]: `{}` must be", spec.key());
            assert!(refused.starts_with(&named), "{refused}");
        }
    }

    #[test]
    fn the_sections_specs_follow_their_structs() {
        use crate::config::ServeConfig;
        use crate::engine::PoolConfig;
        use crate::policy::SessionLimits;
        check_section::<PoolConfig>("pool", PoolConfig::specs(), PoolConfig::validate);
        check_section::<ServeConfig>("serve", ServeConfig::specs(), ServeConfig::validate);
        check_section::<SessionLimits>("sessions", SessionLimits::specs(), SessionLimits::validate);
    }

    #[test]
    fn a_spec_keeps_its_default_as_toml() {
        let spec = SettingSpec::new("pool", "memory_reset", &"auto", Bounds::Any, " a\n b\n");
        assert_eq!(spec.default_value().to_string(), "\"auto\"");
        assert_eq!(spec.doc(), "a b");
        assert_eq!(Bounds::Between(100, 200).to_string(), "100..200");
        assert_eq!(Bounds::AtMost(64).to_string(), "0..64");
    }
}
