//! Test guest: imports an interface the host does not provide.

wit_bindgen::generate!({
    inline: r#"
        package test:guest;
        interface vault {
            secret: func() -> string;
        }
        world tool {
            import vault;
            export tool-info: func() -> string;
            export call: func(name: string, arguments: string) -> result<string, string>;
        }
    "#,
});

struct Module;

impl Guest for Module {
    fn tool_info() -> String {
        r#"[{"type":"function","function":{"name":"echo","description":"Echoes its arguments.","parameters":{"type":"object","properties":{}}}}]"#.to_string()
    }

    fn call(_name: String, _arguments: String) -> Result<String, String> {
        Ok(test::guest::vault::secret())
    }
}

export!(Module);
