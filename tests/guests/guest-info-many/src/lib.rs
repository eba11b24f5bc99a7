//! Test guest: tool-info declares 5000 tools.

struct Module;

impl toolhost_guest::RawModule for Module {
    fn tool_info() -> String {
        let tools: Vec<String> = (0..5000)
            .map(|i| format!(r#"{{"type":"function","function":{{"name":"t{i}"}}}}"#))
            .collect();
        format!("[{}]", tools.join(","))
    }

    fn call(_name: String, _arguments: String) -> Result<String, String> {
        Err("not reached: this module does not load".into())
    }
}

toolhost_guest::export_raw!(Module);
