//! Nothing to build: the build script exists so that this crate's
//! `[build-dependencies]` are built, with the features they ask for.

fn main() {}
