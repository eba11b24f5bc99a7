//! Test guest: tool-info never returns.

struct Module;

impl toolhost_guest::RawModule for Module {
    fn tool_info() -> String {
        #[allow(clippy::empty_loop)]
        loop {}
    }

    fn call(_name: String, _arguments: String) -> Result<String, String> {
        Err("not reached: this module does not load".into())
    }
}

toolhost_guest::export_raw!(Module);
