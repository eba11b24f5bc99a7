//! Replays the fuzz corpus and every input a fuzz run ever found
//! (`fuzz/corpus/<target>/`, `fuzz/regressions/<target>/`) through the same
//! checks the fuzz targets make, on the stable toolchain, in every test run.

use std::path::{Path, PathBuf};

use crate::common::{bundled_manager, runtime};
use crate::fuzz_checks;

/// Every input file of `target`, corpus and regressions.
fn inputs(target: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut files = Vec::new();
    for dir in ["corpus", "regressions"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir).join(target)) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let hidden = path
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'));
            if path.is_file() && !hidden {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

#[test]
fn dispatch_inputs() {
    let manager = bundled_manager();
    let files = inputs("dispatch");
    assert!(files.len() >= 5, "the dispatch corpus is missing");
    for file in files {
        fuzz_checks::dispatch(&manager, &std::fs::read(&file).unwrap());
    }
}

#[test]
fn loader_inputs() {
    let files = inputs("loader");
    assert!(files.len() >= 3, "the loader corpus is missing");
    for file in files {
        fuzz_checks::loader(runtime(), &std::fs::read(&file).unwrap());
    }
}

#[test]
fn config_inputs() {
    let files = inputs("config");
    assert!(files.len() >= 3, "the config corpus is missing");
    for file in files {
        fuzz_checks::config(&std::fs::read(&file).unwrap());
    }
}
