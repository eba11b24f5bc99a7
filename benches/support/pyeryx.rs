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
code, expected = sys.argv[1], sys.argv[2]
n, gap = int(sys.argv[3]), int(sys.argv[4]) / 1e9
sandbox = eryx.Sandbox()
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
#[allow(dead_code)] // each bench that includes this file uses one of the two
pub fn measure(
    expression: &str,
    expected: &str,
    n: usize,
    gap: Duration,
) -> Result<Measured, String> {
    measure_code(&format!("print(repr({expression}))"), expected, n, gap)
}

/// `n` executions of the program `code` (which must print `expected`),
/// each `gap` after the last (see [`measure`]).
pub fn measure_code(
    code: &str,
    expected: &str,
    n: usize,
    gap: Duration,
) -> Result<Measured, String> {
    let python = python();
    let output = Command::new(&python)
        .args(["-c", SCRIPT, code, expected])
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

/// The Python that has pyeryx: [`PYTHON_ENV`], else `python3`.
fn python() -> String {
    std::env::var(PYTHON_ENV).unwrap_or_else(|_| "python3".into())
}

/// A script that runs `code` `n` times in fresh pyeryx sandboxes and
/// prints the seconds it took.
const THROUGHPUT_SCRIPT: &str = r#"
import sys, time
import eryx
code, n = sys.argv[1], int(sys.argv[2])
sandbox = eryx.Sandbox()
sandbox.execute(code)
started = time.perf_counter()
for _ in range(n):
    sandbox.execute(code)
print(time.perf_counter() - started)
"#;

/// Executions per second of `code` with `processes` Python processes
/// each running `n` of them at once (the GIL keeps one process to one
/// core); `Err` as for [`measure`].
#[allow(dead_code)]
pub fn throughput(code: &str, n: usize, processes: usize) -> Result<f64, String> {
    let python = python();
    let children: Vec<_> = (0..processes)
        .map(|_| {
            Command::new(&python)
                .args(["-c", THROUGHPUT_SCRIPT, code])
                .arg(n.to_string())
                .stderr(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .spawn()
                .map_err(|e| format!("cannot run `{python}`: {e}"))
        })
        .collect::<Result<_, _>>()?;
    let mut longest = 0f64;
    for child in children {
        let output = child
            .wait_with_output()
            .map_err(|e| format!("`{python}` failed: {e}"))?;
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            return Err(format!(
                "`{python}` has no working pyeryx ({})",
                stderr.lines().last().unwrap_or("no output")
            ));
        }
        let text = String::from_utf8_lossy(&output.stdout);
        let seconds: f64 = text
            .trim()
            .parse()
            .map_err(|e| format!("not seconds, {text:?}: {e}"))?;
        longest = longest.max(seconds);
    }
    Ok((n * processes) as f64 / longest)
}
