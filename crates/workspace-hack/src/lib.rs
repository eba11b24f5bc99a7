//! No code: this crate's dependencies are its purpose. See its Cargo.toml
//! for why README's `cargo run` needs them to share one build with
//! `cargo test --workspace`.
