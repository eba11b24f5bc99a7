//! Integration tests: the host against real components built from this repo.

mod async_calls;
mod cache;
mod code_exec;
mod common;
mod concurrency;
mod controller;
mod docs;
mod error_table;
mod example_tools;
mod fetch_example;
mod fuzz_inputs;
mod grants;
mod hardening;
mod http;
mod languages_examples;
mod languages_http_async;
mod limits;
mod loading;
mod manager;
mod network;
mod pool;
mod ready;
mod sandbox;
mod sessions;
mod trust;
mod typed_exports;
mod warm;

/// The checks of the fuzz targets, replayed by `fuzz_inputs`.
#[path = "../../fuzz/checks.rs"]
mod fuzz_checks;
