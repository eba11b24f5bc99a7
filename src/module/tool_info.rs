//! Reading a module's tools: `tool-info` run once at load, its answer
//! checked and turned into schemas under the exposed names.

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::Value;

use crate::names;
use crate::policy::{Limits, limit_key, to_usize};
use crate::sandbox::{self, Request, Target};
use crate::tool::{ToolInfo, json_type_name};

use super::fault_text::tool_info_error;
use super::load_error::{LoadError, LoadErrorKind};
use super::typed::TypedFunc;

/// One tool of a module: its local name and its schema under the exposed
/// name; for a component written for another host, the function it calls.
#[derive(Debug, Clone)]
pub(super) struct ModuleTool {
    pub local: String,
    pub info: ToolInfo,
    pub typed: Option<Arc<TypedFunc>>,
}

/// Runs `tool-info` once (under the `tool_info_*` limits, with nothing
/// granted) and turns its answer into checked tool schemas.
pub(super) async fn read_tools(name: &str, target: &Target) -> Result<Vec<ModuleTool>, LoadError> {
    let limits = target.limits();
    let info_limits = Limits {
        fuel: limits.tool_info_fuel,
        timeout_ms: limits.tool_info_timeout_ms,
        ..*limits
    };
    let info_target = target.for_tool_info(info_limits);
    let report = sandbox::run(info_target, Request::ToolInfo, None).await;
    let text = match report.result {
        Ok(Ok(text)) => text,
        Ok(Err(text)) => {
            return Err(LoadError::new(
                name,
                LoadErrorKind::ToolInfoFailed,
                format!("tool-info failed: {text}"),
            ));
        }
        Err(fault) => return Err(tool_info_error(name, fault, &info_limits)),
    };
    parse_tools(name, &text, limits)
}

/// Parses and checks the `tool-info` text of module `module`.
fn parse_tools(module: &str, text: &str, limits: &Limits) -> Result<Vec<ModuleTool>, LoadError> {
    let invalid = |reason: String| LoadError::new(module, LoadErrorKind::InvalidToolInfo, reason);
    let max_bytes = to_usize(limits.max_tool_info_bytes);
    if text.len() > max_bytes {
        return Err(invalid(format!(
            "tool-info returned {} bytes, more than the limit of {max_bytes} bytes (limits.{})",
            text.len(),
            limit_key::max_tool_info_bytes
        )));
    }
    let value: Value = serde_json::from_str(text)
        .map_err(|e| invalid(format!("tool-info did not return valid JSON: {e}")))?;
    let Value::Array(schemas) = value else {
        return Err(invalid(format!(
            "tool-info must return a JSON array of tool schemas, got {}",
            json_type_name(&value)
        )));
    };
    if schemas.len() as u64 > limits.max_tools {
        return Err(invalid(format!(
            "tool-info declares {} tools, more than the limit of {} (limits.{})",
            schemas.len(),
            limits.max_tools,
            limit_key::max_tools
        )));
    }
    let mut seen = HashSet::new();
    let mut tools = Vec::with_capacity(schemas.len());
    for (i, schema) in schemas.iter().enumerate() {
        let mut info =
            ToolInfo::from_schema(schema).map_err(|e| invalid(format!("tool #{i}: {e}")))?;
        names::check_tool_name(&info.name).map_err(|e| invalid(format!("tool #{i}: {e}")))?;
        if !seen.insert(info.name.clone()) {
            return Err(invalid(format!("tool '{}' is declared twice", info.name)));
        }
        let local = std::mem::take(&mut info.name);
        info.name = names::exposed_name(module, &local).map_err(invalid)?;
        tools.push(ModuleTool {
            local,
            info,
            typed: None,
        });
    }
    Ok(tools)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_info_is_validated() {
        let limits = Limits::default();
        let ok = parse_tools(
            "m",
            r#"[{"type":"function","function":{"name":"a_b"}}]"#,
            &limits,
        )
        .unwrap();
        assert_eq!(ok[0].local, "a_b");
        assert_eq!(ok[0].info.name, "m_a_b");
        let err = |t: &str| parse_tools("m", t, &limits).unwrap_err().reason;
        assert!(err("nope").contains("valid JSON"));
        assert!(err("{}").contains("got object"));
        assert!(err(r#"[{"type":"function","function":{"name":"a b"}}]"#).contains("tool #0"));
        let dup = r#"[{"type":"function","function":{"name":"a"}},{"type":"function","function":{"name":"a"}}]"#;
        assert!(err(dup).contains("declared twice"));
        let small = Limits {
            max_tool_info_bytes: 1,
            max_tools: 1,
            ..limits
        };
        let reason = |t: &str| parse_tools("m", t, &small).unwrap_err().reason;
        assert!(reason("[]").contains("more than the limit of 1 bytes"));
        let two = Limits {
            max_tool_info_bytes: 1000,
            ..small
        };
        let reason = parse_tools("m", r#"[{"type":"function","function":{"name":"a"}},{"type":"function","function":{"name":"b"}}]"#, &two)
            .unwrap_err()
            .reason;
        assert!(
            reason.contains("declares 2 tools, more than the limit of 1"),
            "{reason}"
        );
    }
}
