//! Test guest: a component of another world (it exports `run`, not `tool-info`).

wit_bindgen::generate!({
    inline: r#"
        package test:other;
        world other {
            export run: func() -> u32;
        }
    "#,
});

struct Module;

impl Guest for Module {
    fn run() -> u32 {
        42
    }
}

export!(Module);
