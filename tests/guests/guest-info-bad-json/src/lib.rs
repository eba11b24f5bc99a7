//! Test guest: tool-info returns text that is not JSON.

struct Module;

impl toolhost_guest::RawModule for Module {
    fn tool_info() -> String {
        "this is not json".to_string()
    }

    fn call(_name: String, _arguments: String) -> Result<String, String> {
        Err("not reached: this module does not load".into())
    }
}

toolhost_guest::export_raw!(Module);
