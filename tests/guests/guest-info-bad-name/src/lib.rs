//! Test guest: tool-info declares a tool whose name has a space.

struct Module;

impl toolhost_guest::RawModule for Module {
    fn tool_info() -> String {
        r#"[{"type":"function","function":{"name":"bad name","parameters":{"type":"object"}}}]"#
            .to_string()
    }

    fn call(_name: String, _arguments: String) -> Result<String, String> {
        Err("not reached: this module does not load".into())
    }
}

toolhost_guest::export_raw!(Module);
