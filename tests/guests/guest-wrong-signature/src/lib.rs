//! Test guest: exports `tool-info` and `call` with the wrong types.

wit_bindgen::generate!({
    inline: r#"
        package test:other;
        world tool {
            export tool-info: func() -> u32;
            export call: func(name: string) -> string;
        }
    "#,
});

struct Module;

impl Guest for Module {
    fn tool_info() -> u32 {
        1
    }

    fn call(name: String) -> String {
        name
    }
}

export!(Module);
