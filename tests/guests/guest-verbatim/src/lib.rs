//! Test guest: `verbatim`, which answers the arguments text exactly as it
//! received it, so that a test can tell what reached the tool byte for
//! byte on each way in (the command line, MCP over stdio and HTTP, Python).

struct Verbatim;

impl toolhost_guest::RawModule for Verbatim {
    fn tool_info() -> String {
        r#"[{"type":"function","function":{"name":"verbatim","description":"Answers its arguments text as it received it.","parameters":{"type":"object","additionalProperties":true}}}]"#
            .into()
    }

    fn call(name: String, arguments: String) -> Result<String, String> {
        match name.as_str() {
            "verbatim" => Ok(arguments),
            other => Err(format!("no tool '{other}'")),
        }
    }
}

toolhost_guest::export_raw!(Verbatim);
