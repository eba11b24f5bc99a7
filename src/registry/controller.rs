//! [`ToolController`]: which tools are active, decided by ordered glob rules.
//!
//! The first rule whose pattern matches a tool's name decides; with no match
//! the default mode does. Patterns are Unix shell globs (`*`, `?`, `[seq]`,
//! `[!seq]`) matched case-sensitively against exposed names, so `math_*`
//! means every tool of module `math`.

use std::fmt;

use globset::{GlobBuilder, GlobMatcher};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What a rule (or the default) does to the tools it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// The tool is offered to the model and may be called.
    Activate,
    /// The tool is hidden from the model and calls to it are refused.
    Deactivate,
}

impl Mode {
    /// Parses `"activate"` or `"deactivate"`.
    pub fn parse(text: &str) -> Result<Self, ControllerError> {
        match text {
            "activate" => Ok(Self::Activate),
            "deactivate" => Ok(Self::Deactivate),
            other => Err(ControllerError::BadMode(other.to_string())),
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            Self::Activate => "activate",
            Self::Deactivate => "deactivate",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A bad mode or pattern given to a [`ToolController`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ControllerError {
    /// A mode other than `activate` or `deactivate`.
    #[error("invalid mode '{0}': use \"activate\" or \"deactivate\"")]
    BadMode(String),
    /// A pattern that is not a valid glob.
    #[error("invalid pattern '{pattern}': {reason}")]
    BadPattern {
        /// The pattern as written.
        pattern: String,
        /// What is wrong with it.
        reason: String,
    },
}

/// One rule: a mode and the glob pattern of the names it applies to.
#[derive(Clone)]
pub struct Rule {
    mode: Mode,
    pattern: String,
    matcher: GlobMatcher,
}

impl Rule {
    /// A rule; the pattern is checked now.
    pub fn new(mode: Mode, pattern: &str) -> Result<Self, ControllerError> {
        let glob = GlobBuilder::new(&fnmatch_to_globset(pattern))
            .literal_separator(false)
            .case_insensitive(false)
            .backslash_escape(false)
            .allow_unclosed_class(true)
            .build()
            .map_err(|e| ControllerError::BadPattern {
                pattern: pattern.to_string(),
                reason: e.kind().to_string(),
            })?;
        Ok(Self {
            mode,
            pattern: pattern.to_string(),
            matcher: glob.compile_matcher(),
        })
    }

    /// What the rule does.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The pattern as written.
    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// Whether the pattern matches `name`.
    pub fn matches(&self, name: &str) -> bool {
        self.matcher.is_match(name)
    }
}

impl PartialEq for Rule {
    fn eq(&self, other: &Self) -> bool {
        self.mode == other.mode && self.pattern == other.pattern
    }
}

impl fmt::Debug for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Rule(mode={:?}, pattern={:?})",
            self.mode.as_str(),
            self.pattern
        )
    }
}

/// Makes globset read a pattern the way Python's `fnmatch` does: braces are
/// plain characters there, not alternations.
fn fnmatch_to_globset(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    for c in pattern.chars() {
        match c {
            '{' => out.push_str("[{]"),
            '}' => out.push_str("[}]"),
            c => out.push(c),
        }
    }
    out
}

/// The serialized form of a rule: `{"mode", "pattern"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleSpec {
    /// `"activate"` or `"deactivate"`.
    pub mode: String,
    /// A Unix shell glob over exposed tool names.
    pub pattern: String,
}

/// The serialized form of a controller: `{"default_mode", "rules"}`, from JSON or TOML.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControllerSpec {
    /// `"activate"` (the default) or `"deactivate"`.
    #[serde(default = "default_mode_name")]
    pub default_mode: String,
    /// The rules, highest priority first.
    #[serde(default)]
    pub rules: Vec<RuleSpec>,
}

fn default_mode_name() -> String {
    "activate".to_string()
}

/// Which rule decided a tool's status.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// Whether the tool is active.
    pub active: bool,
    /// The deciding rule and its index (0 is the highest priority), or `None`
    /// when no rule matched and the default mode decided.
    pub rule: Option<(usize, Rule)>,
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let status = if self.active { "active" } else { "inactive" };
        match &self.rule {
            Some((i, rule)) => write!(
                f,
                "{status}: rule {} ({} '{}') matched first",
                i + 1,
                rule.mode,
                rule.pattern
            ),
            None => write!(f, "{status}: no rule matched, so the default mode decided"),
        }
    }
}

/// Decides which tools are active from a default mode and ordered rules.
///
/// ```
/// use toolhost::{Mode, ToolController};
///
/// let mut controller = ToolController::new(Mode::Deactivate, [
///     (Mode::Activate, "math_*"),
///     (Mode::Deactivate, "math_add"),
/// ]).unwrap();
/// // The first matching rule wins.
/// assert!(controller.check_tool_status("math_add"));
/// assert!(!controller.check_tool_status("text_translate"));
/// // Dynamic overrides take effect at once, with the highest priority.
/// controller.deactivate_tool("math_add").unwrap();
/// assert!(!controller.check_tool_status("math_add"));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ToolController {
    default_mode: Mode,
    rules: Vec<Rule>,
}

impl Default for ToolController {
    /// Activates every tool.
    fn default() -> Self {
        Self {
            default_mode: Mode::Activate,
            rules: Vec::new(),
        }
    }
}

impl ToolController {
    /// A controller with `default_mode` and `rules` (highest priority first).
    pub fn new<'a>(
        default_mode: Mode,
        rules: impl IntoIterator<Item = (Mode, &'a str)>,
    ) -> Result<Self, ControllerError> {
        let rules = rules
            .into_iter()
            .map(|(mode, pattern)| Rule::new(mode, pattern))
            .collect::<Result<_, _>>()?;
        Ok(Self {
            default_mode,
            rules,
        })
    }

    /// A controller from its serialized form; bad modes and patterns are errors.
    pub fn from_spec(spec: &ControllerSpec) -> Result<Self, ControllerError> {
        let default_mode = Mode::parse(&spec.default_mode)?;
        let rules = spec
            .rules
            .iter()
            .map(|r| Rule::new(Mode::parse(&r.mode)?, &r.pattern))
            .collect::<Result<_, _>>()?;
        Ok(Self {
            default_mode,
            rules,
        })
    }

    /// A controller from its JSON form,
    /// `{"default_mode": "deactivate", "rules": [{"mode": "activate", "pattern": "math_*"}]}`.
    pub fn from_json(value: &Value) -> Result<Self, String> {
        let spec: ControllerSpec = serde_json::from_value(value.clone())
            .map_err(|e| format!("invalid controller: {e}"))?;
        Self::from_spec(&spec).map_err(|e| e.to_string())
    }

    /// The serialized form of this controller.
    pub fn to_spec(&self) -> ControllerSpec {
        ControllerSpec {
            default_mode: self.default_mode.to_string(),
            rules: self
                .rules
                .iter()
                .map(|r| RuleSpec {
                    mode: r.mode.to_string(),
                    pattern: r.pattern.clone(),
                })
                .collect(),
        }
    }

    /// The mode for tools no rule matches.
    pub fn default_mode(&self) -> Mode {
        self.default_mode
    }

    /// The rules, highest priority first.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// Whether tool `name` is active.
    pub fn check_tool_status(&self, name: &str) -> bool {
        self.explain(name).active
    }

    /// Why tool `name` is (in)active: the first matching rule, or the default.
    pub fn explain(&self, name: &str) -> Decision {
        match self.rules.iter().enumerate().find(|(_, r)| r.matches(name)) {
            Some((i, rule)) => Decision {
                active: rule.mode == Mode::Activate,
                rule: Some((i, rule.clone())),
            },
            None => Decision {
                active: self.default_mode == Mode::Activate,
                rule: None,
            },
        }
    }

    /// Activates `name` at once, ahead of every other rule.
    ///
    /// Removes every rule whose pattern is exactly `name`, then inserts
    /// `activate name` first. `name` is a pattern like any other.
    pub fn activate_tool(&mut self, name: &str) -> Result<(), ControllerError> {
        self.override_tool(Mode::Activate, name)
    }

    /// Deactivates `name` at once, ahead of every other rule (see [`Self::activate_tool`]).
    pub fn deactivate_tool(&mut self, name: &str) -> Result<(), ControllerError> {
        self.override_tool(Mode::Deactivate, name)
    }

    fn override_tool(&mut self, mode: Mode, name: &str) -> Result<(), ControllerError> {
        let rule = Rule::new(mode, name)?;
        self.rules.retain(|r| r.pattern != name);
        self.rules.insert(0, rule);
        Ok(())
    }

    /// The active entries of a list of tool schemas, in their order.
    ///
    /// Accepts `{"name": ...}` and the OpenAI
    /// `{"type":"function","function":{"name": ...}}` shapes; entries with
    /// neither name are left out.
    pub fn filter_tool_list(&self, tools: &[Value]) -> Vec<Value> {
        tools
            .iter()
            .filter(|t| schema_name(t).is_some_and(|n| self.check_tool_status(n)))
            .cloned()
            .collect()
    }
}

/// The tool name of a schema in either shape.
fn schema_name(schema: &Value) -> Option<&str> {
    schema
        .get("name")
        .and_then(Value::as_str)
        .or_else(|| schema.get("function")?.get("name")?.as_str())
}

impl<'de> Deserialize<'de> for ToolController {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let spec = ControllerSpec::deserialize(deserializer)?;
        Self::from_spec(&spec).map_err(serde::de::Error::custom)
    }
}

impl Serialize for ToolController {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_spec().serialize(serializer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn first_match_priority() -> ToolController {
        ToolController::new(
            Mode::Deactivate,
            [(Mode::Activate, "math_*"), (Mode::Deactivate, "math_add")],
        )
        .unwrap()
    }

    #[test]
    fn first_matching_rule_wins() {
        let c = first_match_priority();
        assert!(c.check_tool_status("math_add"));
        assert!(!c.check_tool_status("calc_add"));
        let d = c.explain("math_add");
        assert_eq!(d.rule.as_ref().map(|(i, _)| *i), Some(0));
        assert_eq!(
            d.to_string(),
            "active: rule 1 (activate 'math_*') matched first"
        );
        assert_eq!(
            c.explain("x").to_string(),
            "inactive: no rule matched, so the default mode decided"
        );
    }

    #[test]
    fn overrides_replace_exact_rules_and_go_first() {
        let mut c = first_match_priority();
        c.deactivate_tool("math_add").unwrap();
        assert_eq!(c.rules().len(), 2);
        assert_eq!(c.rules()[0].pattern(), "math_add");
        assert_eq!(c.rules()[0].mode(), Mode::Deactivate);
        assert!(!c.check_tool_status("math_add"));
        assert!(c.check_tool_status("math_sub"));
        c.activate_tool("math_add").unwrap();
        assert_eq!(c.rules().len(), 2);
        assert!(c.check_tool_status("math_add"));
    }

    #[test]
    fn globs_follow_fnmatch() {
        let c = |p: &str| Rule::new(Mode::Activate, p).unwrap();
        assert!(c("math_?dd").matches("math_add"));
        assert!(c("math_[ab]dd").matches("math_add"));
        assert!(!c("math_[!ab]dd").matches("math_add"));
        assert!(c("*_calculator").matches("x_calculator"));
        assert!(!c("MATH_*").matches("math_add"));
        assert!(c("a{b,c}").matches("a{b,c}"));
        assert!(!c("a{b,c}").matches("ab"));
        assert!(c("a[").matches("a["));
        assert!(c("*").matches("a/b"));
    }

    #[test]
    fn bad_modes_and_patterns_are_errors() {
        let spec = json!({"default_mode": "maybe", "rules": []});
        assert!(
            ToolController::from_json(&spec)
                .unwrap_err()
                .contains("invalid mode 'maybe'")
        );
        let spec = json!({"rules": [{"mode": "activate", "pattern": "[z-a]"}]});
        assert!(
            ToolController::from_json(&spec)
                .unwrap_err()
                .contains("invalid pattern '[z-a]'")
        );
        let spec = json!({"rules": [{"mode": "activate", "patern": "x"}]});
        assert!(
            ToolController::from_json(&spec)
                .unwrap_err()
                .contains("unknown field")
        );
    }

    #[test]
    fn filters_both_schema_shapes() {
        let c = ToolController::new(Mode::Deactivate, [(Mode::Activate, "math_*")]).unwrap();
        let tools = vec![
            json!({"name": "math_add"}),
            json!({"name": "math_subtract"}),
            json!({"name": "text_translate"}),
            json!({"type": "function", "function": {"name": "math_mul"}}),
        ];
        let active = c.filter_tool_list(&tools);
        let names: Vec<&str> = active.iter().filter_map(schema_name).collect();
        assert_eq!(names, ["math_add", "math_subtract", "math_mul"]);
    }

    #[test]
    fn round_trips_through_toml() {
        let text = "default_mode = \"deactivate\"\nrules = [{ mode = \"activate\", pattern = \"math_*\" }]\n";
        let c: ToolController = toml::from_str(text).unwrap();
        assert!(c.check_tool_status("math_add"));
        assert!(!c.check_tool_status("calc_add"));
        let back: ToolController = toml::from_str(&toml::to_string(&c).unwrap()).unwrap();
        assert_eq!(back, c);
    }
}
