//! pyeryx (CPython in wasmtime, from PyPI), the nearest peer of toolhost's
//! code execution, timed by a Python script this bench runs: `execute` of
//! the same expression in a fresh sandbox per call.

use std::process::Command;
use std::time::Duration;

/// The environment variable naming a Python (3.12 or later) that has
/// pyeryx installed; `python3` when unset.
pub const PYTHON_ENV: &str = "TOOLHOST_PYERYX_PYTHON";

/// How to get a Python with pyeryx, for the message of a skipped row.
pub const INSTALL: &str = "python3.12 -m venv /tmp/eryx && /tmp/eryx/bin/pip install \
     pyeryx==0.11.0, then TOOLHOST_PYERYX_PYTHON=/tmp/eryx/bin/python";

/// What one run of the script measured.
pub struct Measured {
    /// pyeryx's version.
    pub version: String,
    /// Median and 99th percentile of one `execute`.
    pub median: Duration,
    pub p99: Duration,
}

const SCRIPT: &str = r#"
import sys, time
from importlib.metadata import version
import eryx
expression, expected = sys.argv[1], sys.argv[2]
n, gap = int(sys.argv[3]), int(sys.argv[4]) / 1e9
sandbox = eryx.Sandbox()
code = f"print(repr({expression}))"
def run():
    output = sandbox.execute(code).stdout
    output = output.decode() if isinstance(output, bytes) else output
    if output.strip() != expected:
        raise SystemExit(f"pyeryx printed {output!r}, not {expected!r}")
for _ in range(n // 10 + 3):
    run()
samples = []
clock = time.perf_counter_ns
for _ in range(n):
    if gap:
        time.sleep(gap)
    started = clock()
    run()
    samples.append(clock() - started)
samples.sort()
print(version("pyeryx"), samples[n // 2], samples[round((n - 1) * 0.99)])
"#;

/// `n` executions of `expression` (whose `repr` must be `expected`), each
/// `gap` after the last; `Err` says why there is no figure (no Python, no
/// pyeryx, a failed run).
pub fn measure(
    expression: &str,
    expected: &str,
    n: usize,
    gap: Duration,
) -> Result<Measured, String> {
    let python = std::env::var(PYTHON_ENV).unwrap_or_else(|_| "python3".into());
    let output = Command::new(&python)
        .args(["-c", SCRIPT, expression, expected])
        .arg(n.to_string())
        .arg(gap.as_nanos().to_string())
        .output()
        .map_err(|e| format!("cannot run `{python}`: {e}"))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let last = stderr.lines().last().unwrap_or("no output");
        return Err(format!("`{python}` has no working pyeryx ({last})"));
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let mut words = text.split_whitespace();
    let version = words.next().unwrap_or("?").to_string();
    let mut ns = || -> Result<Duration, String> {
        let word = words.next().ok_or("the script printed too little")?;
        word.parse()
            .map(Duration::from_nanos)
            .map_err(|e| format!("not a number of ns, {word:?}: {e}"))
    };
    Ok(Measured {
        version,
        median: ns()?,
        p99: ns()?,
    })
}
