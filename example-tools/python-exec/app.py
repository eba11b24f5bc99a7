"""Runs the Python code a model writes: a toolhost module (a code interpreter).

Tool: `run_python`. Each call runs the code in a fresh CPython (a fresh
instance of this component), with the standard library below already
imported, and answers with what a person would read in a terminal: stdout
and stderr in the order they were written, then the value of a last bare
expression (as a REPL shows it), then the files the code created. An
exception is the tool's error: the model sees `Error: ... failed:` with the
traceback.

With `grants.scratch = true` the code runs in an empty directory of its
own (`/scratch`, removed after the call) and may be given files there
(`files`); in a module with `sessions = true`, a call that carries a
session key runs where that session's previous call left off (its
variables, imports and files). Built with componentize-py
(`cargo xtask build-examples python`).
"""

import ast
import builtins
import gc
import io
import linecache
import os
import sys
import tempfile
import traceback
from typing import Annotated

from toolhost_guest import Toolbox, ToolError

# The standard library the code can import. A component has no files to
# import from when it runs, so what is not imported here, at build time
# (when componentize-py snapshots the interpreter), cannot be imported at
# all: those imports fail with ModuleNotFoundError. `subprocess`,
# `threading` and `socket` are here so that using them fails the way
# Python fails on WASI (no processes, no threads, no sockets without a
# grant), not as a missing module.
PRELOADED = (
    "abc argparse array ast asyncio base64 binascii bisect calendar cmath codecs "
    "collections collections.abc colorsys contextlib copy csv dataclasses datetime "
    "decimal difflib enum errno fnmatch fractions functools gc getopt glob graphlib "
    "gzip hashlib heapq hmac html html.parser inspect io ipaddress itertools json "
    "keyword locale logging math numbers operator os pathlib pickle platform pprint "
    "queue random re reprlib secrets select shlex shutil socket sqlite3 stat "
    "statistics string struct subprocess tarfile tempfile textwrap threading time "
    "timeit tokenize tomllib traceback types typing unicodedata urllib.parse uuid "
    "warnings weakref xml.dom.minidom xml.etree.ElementTree zipfile zlib"
).split()
for _name in PRELOADED:
    __import__(_name)

# Where `grants.scratch = true` puts the call's empty read-write directory.
SCRATCH = "/scratch"

# Characters of output (and of a value's repr, and of a traceback) kept;
# the rest is counted and replaced by a "[truncated] ..." line. As much as
# a model can use in one answer, and well within a module's default output
# limit (max_output_bytes, 1 MiB) even in 4-byte characters.
MAX_OUTPUT_CHARS = 20_000

# Files listed in the answer at most.
MAX_FILES_LISTED = 50

tools = Toolbox()


class _Output(io.TextIOBase):
    """stdout and stderr of the code, together and in order, bounded."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.kept = 0
        self.dropped = 0

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        room = MAX_OUTPUT_CHARS - self.kept
        if room > 0:
            self.parts.append(text[:room])
            self.kept += min(room, len(text))
        self.dropped += max(0, len(text) - max(room, 0))
        return len(text)

    def text(self) -> str:
        text = "".join(self.parts)
        if self.dropped:
            if text and not text.endswith("\n"):
                text += "\n"
            text += f"[truncated] {self.dropped} more characters of output\n"
        return text


def _bounded(text: str) -> str:
    """`text`, cut to MAX_OUTPUT_CHARS with a marker."""
    if len(text) <= MAX_OUTPUT_CHARS:
        return text
    return f"{text[:MAX_OUTPUT_CHARS]}\n[truncated] {len(text) - MAX_OUTPUT_CHARS} more characters"


class _Namespace:
    """The globals the code runs in: new in every fresh instance; kept from
    call to call only within a session (whose instance is reused)."""

    def __init__(self) -> None:
        self.globals: dict = {}
        self.runs = 0
        self.reset()

    def reset(self) -> None:
        self.globals.clear()
        self.globals.update({"__name__": "__main__", "__builtins__": builtins})
        self.runs = 0

    def next_filename(self) -> str:
        """`<code>` for a call's code; `<code 2>`, `<code 3>`... for the
        later calls of a session, so that a traceback through a function an
        earlier call defined shows that call's lines."""
        self.runs += 1
        return "<code>" if self.runs == 1 else f"<code {self.runs}>"


_NAMESPACE = _Namespace()


def _check_file_name(name: str) -> str:
    """A path inside the scratch directory, or a ToolError saying why not."""
    parts = name.replace("\\", "/").split("/")
    if not name or name.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise ToolError(
            f"files: {name!r} is not a relative path inside the scratch directory "
            "(give names like 'data.csv' or 'inputs/a.txt', without '..')"
        )
    return name


def _write_files(files: dict[str, str]) -> dict[str, tuple[int, int]]:
    """Writes the given files into the scratch directory; the state of each
    (size, mtime) afterwards, to tell later which the code changed."""
    if not _INSTANCE.has_scratch():
        raise ToolError(
            "files were given but this module has no scratch directory: "
            "the operator grants one with `grants.scratch = true`"
        )
    for name, text in files.items():
        path = os.path.join(SCRATCH, _check_file_name(name))
        try:
            folder = os.path.dirname(path)
            if folder != SCRATCH:
                # Not from "/": WASI has no "/" to look at, only /scratch.
                os.makedirs(folder, exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        except OSError as e:
            raise ToolError(f"files: cannot write {name!r}: {e}") from None
    return _snapshot()


def _snapshot() -> dict[str, tuple[int, int]]:
    """Every file under the scratch directory: relative name -> (size, mtime)."""
    found: dict[str, tuple[int, int]] = {}
    for root, dirs, names in os.walk(SCRATCH):
        dirs.sort()
        for name in sorted(names):
            path = os.path.join(root, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            found[os.path.relpath(path, SCRATCH)] = (st.st_size, st.st_mtime_ns)
    return found


def _files_report(before: dict[str, tuple[int, int]]) -> str:
    """The files the code created or changed, with their sizes."""
    after = _snapshot()
    changed = [(name, size) for name, (size, mtime) in after.items() if before.get(name) != (size, mtime)]
    if not changed:
        return ""
    shown = ", ".join(f"{name} ({size} bytes)" for name, size in changed[:MAX_FILES_LISTED])
    more = len(changed) - MAX_FILES_LISTED
    if more > 0:
        shown += f", and {more} more"
    return f"[files created or changed in {SCRATCH}: {shown}]\n"


def _user_traceback(error: BaseException) -> str:
    """The traceback of `error` from the code's own frames on (this tool's
    frames left out)."""
    tb = error.__traceback__
    while tb is not None and not tb.tb_frame.f_code.co_filename.startswith("<code"):
        tb = tb.tb_next
    text = "".join(traceback.format_exception(type(error), error, tb))
    if isinstance(error, ModuleNotFoundError):
        text += (
            "(This sandbox has only the standard library modules loaded into it when it "
            "was built; third-party packages and other modules cannot be imported.)\n"
        )
    return _bounded(text)


# How a last line starts when it is a statement, not an expression: the
# fast path of `_compile` does not try those.
_STATEMENT_STARTS = tuple(
    f"{word}{after}"
    for word in "assert async break class continue def del for from global if import "
    "nonlocal pass raise return try while with".split()
    for after in " :(\\"
) + ("@",)


def _last_line_start(code: str) -> int | None:
    """Where the last line of `code` that starts at column 0 with code (not
    a comment, a blank or a closing bracket) begins; None if none does."""
    end = len(code.rstrip())
    while True:
        newline = code.rfind("\n", 0, end)
        start = newline + 1
        first = code[start : start + 1]
        if first and first not in " \t\f\v\r\n#)]}":
            return start
        if newline < 0:
            return None
        end = newline


def _compile_split(code: str, filename: str):
    """The fast way to `_compile`, for code whose last line is an expression
    at column 0 (`print(x)`, `df.mean()`): its lines before that as a module,
    that line on as an expression, two compilations straight from the text.
    None where that split is not the program's own (either part fails to
    compile, or a `__future__` import could change how the last part
    compiles): then the whole program is parsed to find its last statement.

    Correct because a prefix that compiles on its own ends where the
    tokenizer is outside any string, bracket or continued line, so the rest
    is read as in the whole program: a statement at column 0, here an
    expression statement."""
    start = _last_line_start(code)
    if start is None or "__future__" in code or code.startswith(_STATEMENT_STARTS, start):
        return None
    prefix = code[:start]
    try:
        # The newlines keep the expression's line numbers the program's own.
        last = compile("\n" * prefix.count("\n") + code[start:], filename, "eval", dont_inherit=True)
        body = compile(prefix, filename, "exec", dont_inherit=True) if prefix.strip() else None
    except SyntaxError:
        return None
    return body, last


def _compile(code: str, filename: str):
    """`code` compiled as (the module to run or None, the last bare
    expression to evaluate or None)."""
    split = _compile_split(code, filename)
    if split is not None:
        return split
    tree = ast.parse(code, filename, "exec")
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    body = compile(tree, filename, "exec", dont_inherit=True)
    if last is None:
        return body, None
    return body, compile(ast.Expression(last.value), filename, "eval", dont_inherit=True)


def _run(code: str, filename: str, namespace: dict):
    """Runs `code`; the value of its last statement if that is a bare
    expression, else None."""
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    body, last = _compile(code, filename)
    if body is not None:
        exec(body, namespace)
    if last is None:
        return None
    value = eval(last, namespace)
    if value is not None:
        namespace["_"] = value
    return value


class _Instance:
    """What this instance has set up: done when it is primed or on its first
    call (a fresh instance serves one call; a session's serves all its
    calls)."""

    def __init__(self) -> None:
        self.scratch: bool | None = None
        # Calls this instance has run (priming is none).
        self.calls = 0

    def has_scratch(self) -> bool:
        """Whether there is a scratch directory; on the first call, also
        makes it the working directory and the temporary files' place (a
        session keeps whatever working directory its code changed to)."""
        if self.scratch is None:
            self.scratch = os.path.isdir(SCRATCH)
            if self.scratch:
                os.chdir(SCRATCH)
                tempfile.tempdir = SCRATCH
        return self.scratch


_INSTANCE = _Instance()


@tools.on_prime
def _prime() -> None:
    """Looks for the scratch directory before the call (an instance made
    ahead is primed with the grants its call will have)."""
    _INSTANCE.has_scratch()


@tools.tool(
    warm_up=[
        {"code": "print(sum(range(1000)))"},
        {"code": "x = [i * i for i in range(10)]\nx[-1]"},
        {"code": "total = 0\nfor i in range(10):\n    total += i"},
    ]
)
def run_python(
    code: Annotated[str, "The Python 3 program to run, as the text of a file. A last line that is an expression is shown as a REPL shows it."],
    stdin: Annotated[str | None, "Text the program reads as its standard input (input(), sys.stdin)."] = None,
    files: Annotated[
        dict[str, str] | None,
        "Text files to write into the working directory before the program runs: relative name -> contents.",
    ] = None,
) -> str:
    """Runs a Python 3 program in a fresh, isolated interpreter with the
    standard library, and returns its output: stdout and stderr in order,
    then the value of a last bare expression, then the files it created. An
    exception answers with its traceback. No network, no subprocesses, no
    threads, no packages beyond the standard library; the working directory
    (when granted) is empty and private to the call."""
    first_call = _INSTANCE.calls == 0
    _INSTANCE.calls += 1
    scratch = _INSTANCE.has_scratch()
    if files:
        before = _write_files(files)
    elif scratch and not first_call:
        before = _snapshot()
    else:
        # A fresh scratch directory is empty.
        before = {}
    output = _Output()
    saved = (sys.stdin, sys.stdout, sys.stderr)
    sys.stdin = io.StringIO(stdin or "")
    sys.stdout = sys.stderr = output
    failure = None
    value = None
    try:
        value = _run(code, _NAMESPACE.next_filename(), _NAMESPACE.globals)
    except SystemExit as e:
        if e.code not in (None, 0):
            failure = f"SystemExit: {e.code}\n"
    except BaseException as e:  # noqa: BLE001 - the model's code: every failure is its answer
        failure = _user_traceback(e)
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
    answer = output.text()
    if value is not None:
        try:
            shown = repr(value)
        except BaseException as e:  # noqa: BLE001 - a broken __repr__ is the code's
            failure = _user_traceback(e)
        else:
            answer += _bounded(shown) + "\n"
    if scratch:
        answer += _files_report(before)
    if failure is not None:
        raise ToolError(answer + failure)
    return answer if answer else "(no output)"


WitWorld = tools.world()
# The warm-up calls ran at build time: the snapshot starts from no variables
# and with nothing set up.
_NAMESPACE.reset()
_INSTANCE = _Instance()
# Everything alive now (the interpreter, the modules above) is moved out of
# the garbage collector's reach: a collection during a call then looks only
# at what the call made, instead of reading (and so faulting in) the whole
# heap of the snapshot.
gc.collect()
gc.freeze()
