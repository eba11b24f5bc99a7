//! The code interpreters `python-exec` (`run_python`) and `js-exec`
//! (`run_javascript`): built from source like the other examples, loaded as
//! `example-tools/toolhost.toml` loads them, and given ordinary, broken and
//! hostile programs; every hostile one ends in a clear error text and the
//! next call works.

use std::path::PathBuf;
use std::sync::{Arc, Barrier, Mutex, OnceLock};
use std::thread;

use serde_json::{Value, json};
use toolhost::{Access, Grants, Limits, Runtime, SessionLimits, ToolManager, WasmModule};
use xtask::{Example, Repo, build_named_example};

use crate::common::{caching_runtime, call};

/// Builds `example` once per test run; its component's path.
fn built(example: Example) -> PathBuf {
    static BUILT: [OnceLock<Result<PathBuf, String>>; 2] = [OnceLock::new(), OnceLock::new()];
    let slot = usize::from(example == Example::JS_EXEC);
    let result = BUILT[slot].get_or_init(|| {
        build_named_example(&Repo::at(env!("CARGO_MANIFEST_DIR")), example)
            .map_err(|e| format!("{e:#}"))
    });
    result.clone().unwrap_or_else(|e| {
        panic!(
            "{e}\n(`cargo xtask build-examples` builds it by hand; see example-tools/toolhost.toml)"
        )
    })
}

/// `example` loaded once with `limits` (compiled once per test run), with
/// sessions on and, with `scratch`, a scratch directory per call.
fn module(example: Example, scratch: bool) -> WasmModule {
    static LOADED: OnceLock<[WasmModule; 2]> = OnceLock::new();
    let loaded = LOADED.get_or_init(|| {
        [Example::PYTHON_EXEC, Example::JS_EXEC].map(|example| {
            let path = built(example);
            WasmModule::from_file(caching_runtime(), &path, None, limits())
                .unwrap_or_else(|e| panic!("{} loads: {e}", path.display()))
        })
    });
    let module = loaded[usize::from(example == Example::JS_EXEC)].clone();
    let grants = Grants {
        scratch,
        ..Grants::default()
    };
    let access: Access = grants.resolve(std::path::Path::new(".")).expect("grants");
    module.with_access(access).with_sessions(1000)
}

/// The limits of these tests: the defaults, with less fuel and time so that
/// the endless loops end quickly, and a small write budget.
fn limits() -> Limits {
    Limits {
        fuel: 2_000_000_000,
        timeout_ms: 5_000,
        max_write_bytes: 1024 * 1024,
        ..Limits::default()
    }
}

fn manager_of(module: WasmModule) -> ToolManager {
    let mut manager = ToolManager::new();
    manager.register(module).expect("registers");
    manager
}

fn python(scratch: bool) -> ToolManager {
    manager_of(module(Example::PYTHON_EXEC, scratch))
}

fn js() -> ToolManager {
    manager_of(module(Example::JS_EXEC, false))
}

fn run_python(manager: &ToolManager, code: &str) -> String {
    call(manager, "python-exec_run_python", json!({"code": code}))
}

fn run_js(manager: &ToolManager, code: &str) -> String {
    call(manager, "js-exec_run_javascript", json!({"code": code}))
}

fn py_call(arguments: Value) -> Value {
    json!({"id": "c", "type": "function", "function": {"name": "python-exec_run_python", "arguments": arguments}})
}

fn js_call(code: &str) -> Value {
    json!({"id": "c", "type": "function", "function": {"name": "js-exec_run_javascript", "arguments": {"code": code}}})
}

/// The start of a `run_python` error.
const PY_FAILED: &str = "Error: tool 'python-exec_run_python' failed: ";
/// The start of a `run_javascript` error.
const JS_FAILED: &str = "Error: tool 'js-exec_run_javascript' failed: ";

#[test]
fn python_answers_with_output_values_and_tracebacks() {
    let m = python(false);
    assert_eq!(run_python(&m, "print(sum(range(1000)))"), "499500\n");
    assert_eq!(run_python(&m, "x = 6\nx * 7"), "42\n", "a last expression");
    assert_eq!(run_python(&m, "'a' + 'b'"), "'ab'\n", "shown as repr");
    assert_eq!(run_python(&m, "x = 1"), "(no output)");
    assert_eq!(run_python(&m, "None"), "(no output)");
    // A last line at column 0 is the last statement only where the lines
    // before it end outside any string or bracket.
    for (code, answer) in [
        ("s = '''\nlen(s)\n'''", "(no output)"),
        ("s = '''\nx'''\nlen(s)", "2\n"),
        ("t = (1,\n2)\nt", "(1, 2)\n"),
        ("x = 1; x", "1\n"),
        ("total = sum([1,\n  2])\ntotal\n# done\n\n", "3\n"),
        ("print(\n  'a')", "a\n"),
        ("if True:\n    y = 5\ny", "5\n"),
        ("from __future__ import annotations\n1 + 1", "2\n"),
        ("def f():\n    return 4\n\nf()", "4\n"),
    ] {
        assert_eq!(run_python(&m, code), answer, "{code:?}");
    }
    let line = run_python(&m, "x = 1\ny = 0\nx / y");
    assert!(
        line.contains("File \"<code>\", line 3, in <module>\n    x / y"),
        "the last expression's own line: {line}"
    );
    assert_eq!(
        run_python(
            &m,
            "import sys\nprint('out 1')\nprint('err 1', file=sys.stderr)\nprint('out 2')\n3"
        ),
        "out 1\nerr 1\nout 2\n3\n",
        "stdout and stderr in order"
    );
    let error = run_python(&m, "print('before')\ndef f(n):\n    return 10 / n\nf(0)");
    assert!(error.starts_with(PY_FAILED), "{error}");
    for part in [
        "before\nTraceback (most recent call last):\n",
        "File \"<code>\", line 4, in <module>",
        "File \"<code>\", line 3, in f\n    return 10 / n",
        "ZeroDivisionError: division by zero",
    ] {
        assert!(error.contains(part), "{part:?} in {error}");
    }
    assert!(
        !error.contains("app.py"),
        "the tool's own frames are left out: {error}"
    );
    let syntax = run_python(&m, "def f(:\n  pass");
    assert!(
        syntax.starts_with(PY_FAILED) && syntax.contains("SyntaxError"),
        "{syntax}"
    );
    let exit = run_python(&m, "print('bye')\nraise SystemExit(3)");
    assert_eq!(exit, format!("{PY_FAILED}bye\nSystemExit: 3\n"));
    assert_eq!(run_python(&m, "import sys\nsys.exit(0)"), "(no output)");
    let input = call(
        &m,
        "python-exec_run_python",
        json!({"code": "name = input('name? ')\nprint('hi', name)\nimport sys\nprint(sys.stdin.read().split())", "stdin": "ada\nb c\n"}),
    );
    assert_eq!(input, "name? hi ada\n['b', 'c']\n");
}

#[test]
fn python_has_its_standard_library() {
    let m = python(false);
    let code = r#"
import json, math, re, datetime, collections, itertools, statistics, decimal
import fractions, random, csv, textwrap, io, functools, heapq, string, hashlib
import base64, uuid, sqlite3, zlib, dataclasses, typing, enum, pathlib, struct
import xml.etree.ElementTree as ET, urllib.parse, difflib, html, calendar
print(json.dumps({"a": [1, 2]}), math.isqrt(99), re.findall(r"\d+", "a1b22"))
print(datetime.date(2026, 12, 4).isoformat(), collections.Counter("abca").most_common(1))
print(list(itertools.islice(itertools.count(3), 3)), statistics.median([3, 1, 2]))
print(decimal.Decimal("0.1") + decimal.Decimal("0.2"), fractions.Fraction(1, 3) * 3)
random.seed(1); print(len(textwrap.wrap("a " * 50, 20)))
rows = list(csv.reader(io.StringIO("a,b\n1,2\n"))); print(rows)
print(hashlib.sha256(b"abc").hexdigest()[:8], base64.b64encode(b"hi").decode())
db = sqlite3.connect(":memory:"); db.execute("create table t (x)"); db.execute("insert into t values (41)")
print(db.execute("select x + 1 from t").fetchone()[0])
print(len(zlib.compress(b"a" * 1000)) < 100, ET.fromstring("<a><b/></a>")[0].tag)
print(urllib.parse.urlparse("https://x.org/p?q=1").netloc)
"#;
    assert_eq!(
        run_python(&m, code),
        "{\"a\": [1, 2]} 9 ['1', '22']\n\
         2026-12-04 [('a', 2)]\n\
         [3, 4, 5] 2\n\
         0.3 1\n\
         5\n\
         [['a', 'b'], ['1', '2']]\n\
         ba7816bf aGk=\n\
         42\n\
         True b\n\
         x.org\n"
    );
    let missing = run_python(&m, "import numpy");
    assert!(
        missing.starts_with(PY_FAILED)
            && missing.contains("ModuleNotFoundError: No module named 'numpy'")
            && missing.contains("third-party packages"),
        "{missing}"
    );
}

#[test]
fn hostile_python_ends_in_a_clear_error_and_the_next_call_works() {
    let m = python(true);
    let cases: &[(&str, &str, &str)] = &[
        (
            "an endless loop",
            "while True:\n    pass",
            "ran out of fuel",
        ),
        ("a memory bomb", "x = bytearray(10**9)", "MemoryError"),
        (
            "a growing list",
            "x = []\nwhile True:\n    x.append('a' * 10**6)",
            "MemoryError",
        ),
        (
            "deep recursion",
            "def f(n):\n    return f(n + 1)\nf(0)",
            "RecursionError",
        ),
        ("os.system", "import os\nos.system('ls')", "AttributeError"),
        ("reading /etc/passwd", "open('/etc/passwd').read()", "Error"),
        (
            "a socket",
            "import socket\ns = socket.create_connection(('127.0.0.1', 80))",
            "Error",
        ),
        ("ctypes", "import ctypes", "ModuleNotFoundError"),
        (
            "a subprocess",
            "import subprocess\nsubprocess.run(['ls'])",
            "Error",
        ),
        (
            "a thread",
            "import threading\nthreading.Thread(target=print).start()",
            "RuntimeError",
        ),
        (
            "too many open files",
            "files = [open(f'f{i}', 'w') for i in range(1000)]",
            "Error",
        ),
        (
            "the scratch quota",
            "with open('big', 'wb') as f:\n    while True:\n        f.write(b'x' * 65536)",
            "OSError",
        ),
    ];
    for (what, code, expected) in cases {
        let answer = run_python(&m, code);
        assert!(answer.starts_with("Error: "), "{what}: {answer}");
        assert!(
            answer.contains(expected),
            "{what}: {expected:?} in {answer}"
        );
        assert!(!answer.contains("/tmp/"), "{what}: no host path: {answer}");
        assert_eq!(run_python(&m, "print(1 + 1)"), "2\n", "after {what}");
    }
    let flood = run_python(&m, "for i in range(2000):\n    print('line', i, 'x' * 100)");
    assert!(flood.starts_with("line 0 xxx"), "{}", &flood[..40]);
    let tail = &flood[flood.len() - 60..];
    assert!(
        flood.contains("\n[truncated] ") && flood.ends_with(" more characters of output\n"),
        "{tail}"
    );
    assert!(flood.len() < 21_000, "bounded: {}", flood.len());
    let huge_value = run_python(&m, "'x' * 10**6");
    assert!(huge_value.contains("\n[truncated] "), "a huge repr is cut");
    assert!(huge_value.len() < 21_000, "bounded: {}", huge_value.len());
}

#[test]
fn python_runs_in_a_scratch_directory_of_its_own() {
    let m = python(true);
    let answer = call(
        &m,
        "python-exec_run_python",
        json!({
            "code": "import csv, os, statistics\nrows = list(csv.DictReader(open('data.csv')))\nmean = statistics.mean(float(r['x']) for r in rows)\nopen('summary.txt', 'w').write(f'mean={mean}\\n')\nprint(os.getcwd(), sorted(os.listdir('.')), mean)",
            "files": {"data.csv": "x\n1\n2\n6\n", "inputs/note.txt": "n"},
        }),
    );
    assert_eq!(
        answer,
        "/scratch ['data.csv', 'inputs', 'summary.txt'] 3.0\n\
         [files created or changed in /scratch: summary.txt (9 bytes)]\n"
    );
    assert_eq!(
        run_python(&m, "import os\nprint(os.listdir('/scratch'))"),
        "[]\n",
        "the next call's directory is empty"
    );
    // The directory is removed on the host once the call's store is dropped
    // (off the call's path, so soon after the answer).
    let marker = format!("marker-{}", toolhost::SessionId::new());
    let wrote = run_python(&m, &format!("open('{marker}', 'w').write('m')"));
    assert!(wrote.contains(&marker), "{wrote}");
    assert!(scratch_removed(&marker), "removed after the call");
    let escape = call(
        &m,
        "python-exec_run_python",
        json!({"code": "1", "files": {"../x": "no"}}),
    );
    assert!(
        escape.contains("is not a relative path inside the scratch directory"),
        "{escape}"
    );
    let without = python(false);
    let refused = call(
        &without,
        "python-exec_run_python",
        json!({"code": "1", "files": {"a.txt": "x"}}),
    );
    assert!(refused.contains("grants.scratch = true"), "{refused}");
    assert!(
        run_python(&without, "import os\nos.listdir('/scratch')").contains("FileNotFoundError"),
        "no scratch directory without the grant"
    );
}

#[test]
fn python_sessions_keep_variables_and_files_and_nothing_else() {
    let m = python(true);
    let session = m.session();
    let other = m.session();
    assert_eq!(
        session.call(&py_call(json!({"code": "x = 41\nimport math"}))),
        "(no output)"
    );
    assert_eq!(
        session.call(&py_call(json!({"code": "print(x + 1)"}))),
        "42\n"
    );
    assert_eq!(
        session.call(&py_call(
            json!({"code": "open('kept.txt', 'w').write('k')"})
        )),
        "1\n[files created or changed in /scratch: kept.txt (1 bytes)]\n"
    );
    assert_eq!(
        session.call(&py_call(
            json!({"code": "open('kept.txt').read() + str(math.pi)[:4]"})
        )),
        "'k3.14'\n"
    );
    let error = session.call(&py_call(json!({"code": "def g():\n    return 1 / 0"})));
    assert_eq!(error, "(no output)");
    let traced = session.call(&py_call(json!({"code": "g()"})));
    assert!(
        traced.contains("File \"<code 6>\", line 1")
            && traced.contains("File \"<code 5>\", line 2"),
        "frames name the call that defined them: {traced}"
    );
    assert!(
        other
            .call(&py_call(json!({"code": "x"})))
            .contains("NameError: name 'x' is not defined"),
        "another session does not see x"
    );
    assert!(
        run_python(&m, "x").contains("NameError"),
        "a call without a session does not see x"
    );
    assert_eq!(
        session.call(&py_call(json!({"code": "x"}))),
        "41\n",
        "x lives on"
    );
    let bomb = session.call(&py_call(json!({"code": "while True: pass"})));
    assert!(
        bomb.contains("ran out of fuel") && bomb.contains("state was dropped"),
        "{bomb}"
    );
    assert!(
        session
            .call(&py_call(json!({"code": "x"})))
            .contains("NameError"),
        "after a limit the session starts afresh"
    );
}

#[test]
fn a_thousand_python_sessions_in_a_loop_stay_bounded() {
    // A runtime of its own, so that its evictions do not reach the other
    // tests' sessions.
    let max = 20;
    let runtime = Runtime::builder()
        .sessions(SessionLimits {
            max,
            ..SessionLimits::default()
        })
        .build()
        .expect("runtime starts");
    let path = built(Example::PYTHON_EXEC);
    let module = WasmModule::from_file(&runtime, &path, None, limits())
        .expect("loads")
        .with_sessions(1000);
    let m = manager_of(module);
    for i in 0..1000 {
        // Joined, not owned: the session outlives this value, so the
        // sessions pile up until the oldest are evicted.
        let session = m.join_session(toolhost::SessionId::new());
        let set = session.call(&py_call(json!({"code": format!("x = {i}\nx")})));
        assert_eq!(set, format!("{i}\n"), "session {i}");
        assert!(runtime.live_sessions() as u64 <= max);
    }
    assert_eq!(runtime.live_sessions() as u64, max);
    assert_eq!(run_python(&m, "print('still serving')"), "still serving\n");
}

#[test]
fn concurrent_python_sessions_never_see_each_others_variables() {
    let m = Arc::new(python(true));
    let threads = 4;
    let start = Arc::new(Barrier::new(threads));
    let workers: Vec<_> = (0..threads)
        .map(|t| {
            let m = Arc::clone(&m);
            let start = Arc::clone(&start);
            thread::spawn(move || {
                let session = m.session();
                start.wait();
                let mut wrong = Vec::new();
                for round in 0..10 {
                    let code = format!(
                        "try:\n    seen\nexcept NameError:\n    seen = []\nseen.append({t})\nopen('mine', 'a').write('{t}')\nprint(seen, open('mine').read())"
                    );
                    let expected_seen = vec![t.to_string(); round + 1].join(", ");
                    let expected_file = t.to_string().repeat(round + 1);
                    let answer = session.call(&py_call(json!({"code": code})));
                    let expected = format!("[{expected_seen}] {expected_file}\n");
                    if !answer.starts_with(&expected) {
                        wrong.push(format!("thread {t} round {round}: {answer}"));
                    }
                }
                wrong
            })
        })
        .collect();
    let wrong: Vec<String> = workers
        .into_iter()
        .flat_map(|w| w.join().unwrap())
        .collect();
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn javascript_answers_with_output_values_and_stacks() {
    let m = js();
    assert_eq!(
        run_js(
            &m,
            "let total = 0;\nfor (let i = 0; i < 1000; i++) total += i;\nconsole.log(total)"
        ),
        "499500\n"
    );
    assert_eq!(run_js(&m, "const x = 6;\nx * 7"), "42\n");
    assert_eq!(
        run_js(
            &m,
            "console.log('a', {b: [1, 'c']}); console.error('e'); 'done'"
        ),
        "a { b: [ 1, \"c\" ] }\ne\n\"done\"\n"
    );
    assert_eq!(run_js(&m, "let y = 1;"), "(no output)");
    let error = run_js(
        &m,
        "console.log('before');\nfunction f() { throw new TypeError('bad'); }\nf();",
    );
    assert!(error.starts_with(JS_FAILED), "{error}");
    assert!(error.contains("before\nTypeError: bad"), "{error}");
    assert!(
        error.contains("<code>:2"),
        "the stack names the code's line: {error}"
    );
    let syntax = run_js(&m, "let = = 1");
    assert!(
        syntax.starts_with(JS_FAILED) && syntax.contains("SyntaxError"),
        "{syntax}"
    );
    let input = call(
        &m,
        "js-exec_run_javascript",
        json!({"code": "const a = readline(); const b = readline(); [a, b, readline()]", "stdin": "one\ntwo\n"}),
    );
    assert_eq!(input, "[ \"one\", \"two\", null ]\n");
    let files = call(
        &m,
        "js-exec_run_javascript",
        json!({"code": "const n = fs.readFileSync('in.txt').trim().split('\\n').length;\nfs.writeFileSync('out.txt', String(n));\nn", "files": {"in.txt": "a\nb\nc\n"}}),
    );
    assert_eq!(files, "3\n[files created or changed: out.txt (1 bytes)]\n");
    assert_eq!(
        run_js(&m, "(async () => { await null; return 7; })()"),
        "7\n",
        "a Promise it ends with is awaited"
    );
}

#[test]
fn hostile_javascript_ends_in_a_clear_error_and_the_next_call_works() {
    let m = js();
    let cases: &[(&str, &str, &str)] = &[
        ("an endless loop", "while (true) {}", "ran out of fuel"),
        (
            "a memory bomb",
            "const a = []; while (true) a.push(new Array(1e6).fill(1));",
            "Error: tool",
        ),
        (
            "deep recursion",
            "function f(n) { return f(n + 1) + 1; }\nf(0)",
            "recursion",
        ),
        ("a thrown string", "throw 'no'", "Uncaught \"no\""),
    ];
    for (what, code, expected) in cases {
        let answer = run_js(&m, code);
        assert!(answer.starts_with("Error: "), "{what}: {answer}");
        assert!(
            answer.contains(expected),
            "{what}: {expected:?} in {answer}"
        );
        assert_eq!(run_js(&m, "1 + 1"), "2\n", "after {what}");
    }
    let flood = run_js(
        &m,
        "for (let i = 0; i < 2000; i++) console.log('line', i, 'x'.repeat(100))",
    );
    assert!(flood.starts_with("line 0 xxx"), "{}", &flood[..40]);
    assert!(
        flood.contains("\n[truncated] ") && flood.ends_with(" more characters of output\n"),
        "{}",
        &flood[flood.len() - 80..]
    );
}

#[test]
fn javascript_sessions_keep_globals_and_files() {
    let m = js();
    let session = m.session();
    assert_eq!(
        session.call(&js_call("const x = 41; let list = [];")),
        "(no output)"
    );
    assert_eq!(session.call(&js_call("list.push(x + 1); list")), "[ 42 ]\n");
    assert_eq!(
        session.call(&js_call(
            "fs.writeFileSync('k.txt', 'kept'); fs.readdirSync()"
        )),
        "[ \"k.txt\" ]\n[files created or changed: k.txt (4 bytes)]\n"
    );
    assert_eq!(
        session.call(&js_call("fs.readFileSync('k.txt')")),
        "\"kept\"\n"
    );
    assert!(
        m.session()
            .call(&js_call("typeof x"))
            .contains("\"undefined\""),
        "another session does not see x"
    );
    assert!(run_js(&m, "fs.existsSync('k.txt')").contains("false"));
}

#[test]
fn the_example_config_serves_the_interpreters() {
    built(Example::PYTHON_EXEC);
    built(Example::JS_EXEC);
    for language in xtask::Language::ALL {
        xtask::build_example(&Repo::at(env!("CARGO_MANIFEST_DIR")), language).expect("builds");
    }
    let config =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("example-tools/toolhost.toml");
    let loaded = toolhost::config::LoadedConfig::discover(Some(&config)).expect("config reads");
    let m = loaded
        .build_manager(caching_runtime())
        .expect("every module loads");
    let session = m.session();
    assert_eq!(
        session.call(&py_call(
            json!({"code": "open('a', 'w').write('x'); z = 2"})
        )),
        "[files created or changed in /scratch: a (1 bytes)]\n"
    );
    assert_eq!(session.call(&py_call(json!({"code": "z * 21"}))), "42\n");
    assert_eq!(session.call(&js_call("var w = 20; w")), "20\n");
    assert_eq!(session.call(&js_call("w + 1")), "21\n");
}

/// `python-exec` with a scratch directory and sessions, with the time and
/// fuel for programs that make tens of thousands of entries even on a slow,
/// busy machine, and `max_created_entries` as given (each bound loaded once).
fn python_with_time_for(max_created_entries: u64) -> ToolManager {
    static LOADED: Mutex<Vec<(u64, WasmModule)>> = Mutex::new(Vec::new());
    let mut loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
    let module = match loaded.iter().find(|(n, _)| *n == max_created_entries) {
        Some((_, module)) => module.clone(),
        None => {
            let limits = Limits {
                fuel: 40_000_000_000,
                timeout_ms: 120_000,
                max_created_entries,
                ..limits()
            };
            let module = WasmModule::from_file(
                caching_runtime(),
                &built(Example::PYTHON_EXEC),
                None,
                limits,
            )
            .expect("loads");
            loaded.push((max_created_entries, module.clone()));
            module
        }
    };
    drop(loaded);
    let grants = Grants {
        scratch: true,
        ..Grants::default()
    };
    let access: Access = grants.resolve(std::path::Path::new(".")).expect("grants");
    manager_of(module.with_access(access).with_sessions(1000))
}

/// A program that leaves `marker` in its scratch directory beside a chain
/// of directories 30,000 deep, built as a hostile program builds it (each
/// new directory takes the chain so far under it, so no path grows long).
fn deep_tree(marker: &str) -> String {
    format!(
        "import os\nopen('{marker}', 'w').write('m')\nos.mkdir('d0')\nfor i in range(1, 30000):\n    os.mkdir(f'd{{i}}')\n    os.rename(f'd{{i-1}}', f'd{{i}}/x')\nprint('built')"
    )
}

/// The scratch directories on the host now.
fn scratch_dirs() -> impl Iterator<Item = PathBuf> {
    std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("toolhost-scratch-"))
        })
}

/// Waits (a bounded while) until no scratch directory on the host holds
/// `marker`; whether none does.
fn scratch_removed(marker: &str) -> bool {
    let left = || scratch_dirs().any(|dir| dir.join(marker).exists());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while left() && std::time::Instant::now() < deadline {
        thread::sleep(std::time::Duration::from_millis(50));
    }
    !left()
}

/// A scratch directory holding a chain of directories 30,000 deep (which a
/// removal recursing on the host thread's stack does not survive: the
/// process aborted) is removed when its call's store is dropped, and when
/// its session ends; the host answers the next call.
#[test]
fn a_scratch_tree_of_any_depth_is_removed_and_the_host_answers_on() {
    let m = python_with_time_for(100_000);
    let marker = format!("fresh-{}", toolhost::SessionId::new());
    assert_eq!(
        run_python(&m, &deep_tree(&marker)).lines().next(),
        Some("built")
    );
    assert!(
        scratch_removed(&marker),
        "the fresh call's directory is removed"
    );
    assert_eq!(run_python(&m, "print(1 + 1)"), "2\n");

    let session = m.session();
    let marker = format!("session-{}", toolhost::SessionId::new());
    let built = session.call(&py_call(json!({"code": deep_tree(&marker)})));
    assert_eq!(built.lines().next(), Some("built"), "{built}");
    assert_eq!(
        session.call(&py_call(json!({"code": "import os\nlen(os.listdir('.'))"}))),
        "2\n",
        "the session keeps its tree"
    );
    session.end();
    assert!(
        scratch_removed(&marker),
        "the ended session's directory is removed"
    );
    assert_eq!(run_python(&m, "print(1 + 1)"), "2\n");
}

/// The host's bytes under `dir` (blocks in use, as `du` counts them) and its
/// entries, for a tree shallow enough to walk by path.
fn host_usage(dir: &std::path::Path) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    let (mut bytes, mut entries) = (0, 0);
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let meta = entry.path().symlink_metadata().unwrap();
            bytes += meta.blocks() * 512;
            entries += 1;
            if meta.is_dir() {
                pending.push(entry.path());
            }
        }
    }
    (bytes, entries)
}

/// The scratch directory on the host that holds `marker`.
fn scratch_holding(marker: &str) -> PathBuf {
    scratch_dirs()
        .find(|dir| dir.join(marker).exists())
        .expect("the session's scratch directory")
}

/// Directories and files count against `max_created_entries` (the default,
/// 10,000): a program that makes them until refused gets an OS error
/// (`No space left on device`) at the bound, and the host holds no more
/// than `max_write_bytes` plus about 4 KiB an entry.
#[test]
fn created_entries_are_bounded_and_refused_like_a_full_disk() {
    let m = python_with_time_for(Limits::default().max_created_entries);
    let session = m.session();
    let marker = format!("entries-{}", toolhost::SessionId::new());
    let code = format!(
        "import os\nopen('{marker}', 'w').close()\nn = 0\ntry:\n    while True:\n        os.mkdir(f'd{{n}}') if n % 2 else open(f'f{{n}}', 'w').close()\n        n += 1\nexcept OSError as e:\n    print(n, e.strerror)"
    );
    let answer = session.call(&py_call(json!({"code": code})));
    assert_eq!(
        answer.lines().next(),
        Some("9999 No space left on device"),
        "{answer}"
    );
    let (bytes, entries) = host_usage(&scratch_holding(&marker));
    assert_eq!(entries, 10_000);
    let bound = limits().max_write_bytes + entries * (4096 + 264);
    assert!(bytes <= bound, "{bytes} bytes on the host, over {bound}");
    let next = session.call(&py_call(json!({"code": "import os\nos.mkdir('more')"})));
    assert!(
        next.contains("No space left on device"),
        "the session is full: {next}"
    );
    let clean = "import os\nos.remove('f0')\nos.rmdir('d1')";
    assert_eq!(
        session.call(&py_call(json!({"code": clean}))),
        "(no output)"
    );
    assert_eq!(
        session.call(&py_call(
            json!({"code": "import os\nos.mkdir('room')\nprint('ok')"})
        )),
        "ok\n",
        "removing entries makes room for the next call"
    );
}

/// What a session keeps counts against its calls' `max_write_bytes` however
/// deep it is buried: a file buried 2,200 directories down (deeper than a
/// host path can reach) still fills the quota; a hole left by writing past
/// a file's end counts as written.
#[test]
fn a_sessions_scratch_quota_sees_files_buried_at_any_depth_and_holes() {
    let m = python_with_time_for(Limits::default().max_created_entries);
    let session = m.session();
    let bury = "import os\nopen('f', 'wb').write(b'x' * 900 * 1024)\nos.mkdir('b0')\nos.rename('f', 'b0/f')\nfor i in range(1, 2200):\n    os.mkdir(f'b{i}')\n    os.rename(f'b{i-1}', f'b{i}/x')\nos.rename('b2199', 'top' + str(len(os.listdir('.'))))\nprint('buried')";
    assert_eq!(
        session.call(&py_call(json!({"code": bury}))).lines().next(),
        Some("buried")
    );
    let again = session.call(&py_call(json!({"code": bury})));
    assert!(
        again.contains("OSError") && !again.contains("buried"),
        "900 KiB more does not fit in 1 MiB: {again}"
    );
    let hole = run_python(
        &m,
        "f = open('sparse', 'wb')\nf.seek(10**9)\nf.write(b'x')\nf.close()\nprint('written')",
    );
    assert!(
        hole.contains("OSError") && !hole.contains("written"),
        "a 1 GB hole is over 1 MiB: {hole}"
    );
}
