//! Test guest: tool-info panics.

struct Module;

impl toolhost_guest::RawModule for Module {
    fn tool_info() -> String {
        panic!("tool-info exploded")
    }

    fn call(_name: String, _arguments: String) -> Result<String, String> {
        Err("not reached: this module does not load".into())
    }
}

toolhost_guest::export_raw!(Module);
