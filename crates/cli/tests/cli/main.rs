//! Tests of the `toolhost` command, run as a process against real components.

mod cache;
mod commands;
mod injection;
mod languages;
