//! Regression tests of the hardening round: each reproduces one attack of
//! the red-team report (SECURITY.md's "The host around the sandbox
//! (hardening)" names the file of each) and checks what must hold instead.

mod arguments;
mod batch;
mod cache;
mod errors;
mod files;
mod http;
mod instances;
mod output;
mod resolver;
mod sections;
mod transcoding;
