//! Integration tests: the host against real components built from this repo.

mod cli;
mod common;
mod concurrency;
mod controller;
mod example_tools;
mod grants;
mod limits;
mod loading;
mod manager;
mod network;
mod sandbox;
