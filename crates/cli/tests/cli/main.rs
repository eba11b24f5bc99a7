//! Tests of the `toolhost` command, run as a process against real components.

mod cache;
mod commands;
mod compile;
mod files;
mod http;
mod injection;
mod languages;
mod oci;
