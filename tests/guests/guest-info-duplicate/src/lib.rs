//! Test guest: tool-info declares the same tool twice.

struct Module;

impl toolhost_guest::RawModule for Module {
    fn tool_info() -> String {
        r#"[{"type":"function","function":{"name":"twice"}},{"type":"function","function":{"name":"twice"}}]"#.to_string()
    }

    fn call(_name: String, _arguments: String) -> Result<String, String> {
        Err("not reached: this module does not load".into())
    }
}

toolhost_guest::export_raw!(Module);
