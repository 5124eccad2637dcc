"""Hostile-input probe: the CLI, share links and uploads, rerun with counts.

`.venv/bin/python bench/probe.py` (`--quick`: a third of each kind; `--only cli,links`) prints
`CLI: N runs, P passed, F failed` (then Links, Uploads), each failure below it (command, link or
file, and why), then the totals; exits 1 if anything failed. CLI: valid runs in every format;
each option of each sub-command (from engine.cli.main's parser) with a hostile value; every file
input as /dev/zero, a FIFO, missing, a directory, empty, binary, not UTF-8, a 131,073-character
cell, 1 MB + 1, 10,000 rows, BOM, CRLF, formulas; `--catalog=`; a 1e-300 B/s chip; a
`=HYPERLINK(...).json` config; huge batch lists. 20 s, 2 GiB each. Pass: exit 0 or 2, no
traceback, one stderr line on exit 2; on exit 0 `--format json` is strict JSON (no NaN), `csv`
has no cell starting = + - @ but numbers, a table no nan/inf. Links (AppTest, app.py, pages/*):
every declared parameter (ui/<page>/link.py) as junk, two at a time, all at once, duplicated;
unknown keys, `lang=xx`, 45 keys. Uploads (AppTest's file_uploader): /accuracy, /load trace,
config.json on /decode, /load, /train, /catalogue TOML, hostile bytes and names. Pass: no
exception, no raw `**bold**`/`[x](http://e)` rendered, no HTML payload, done in 60 s; a bad
upload refused by an error or warning naming the problem, a good one taken.

First run (2026-12-02): 615 runs, 15 failed (CLI 12, uploads 3). After the fixes it found
(FIFOs, traces, training rows, a tooltip, --out): CLI 385/385, links 182/182, uploads 48/48.
"""

from __future__ import annotations

import argparse
import csv
import importlib
import inspect
import io
import json
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

WORKERS, CLI_TIMEOUT, PAGE_TIMEOUT, MEMORY = 2, 20, 60, 2 << 30


def limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))  # 2 GiB of address space


MD = "**bold**[x](http://e)"  # must never render as bold text or a live link
LIVE = ("**bold**", "[x](http://e)")
NUMBERS = ["nan", "inf", "-inf", "-1", "0", "1e-320", "1e308", "abc", "", "1e999", "9" * 40, "-0"]
TEXTS = ["", "NoSuch", MD, "<script>alert(1)</script>", "1..100000", "x" * 5000, "=1+1", "-1"]
FORMULA = '=HYPERLINK("evil.example","x")+1.json'
LLM = ["--model", "Llama-3.1-8B", "--hardware", "H100"]
TRAIN = ["--model", "Llama-3.1-8B", "--hardware", "H100", "--gpus", "64"]
TRAIN += ["--global-batch-size", "512", "--seq-len", "4096"]
MEAS_HEAD = "source,engine,hardware,tp,model,precision,kv_precision,batch_size,input_tokens,"
MEAS_HEAD += "output_tokens,metric,value"
MEAS_ROW = "x,e,H100,1,GPT-J-6B,fp8,fp8,{b},128,128,output_tokens_per_s_per_gpu,{v}"
TRACE_HEAD = "arrival_s,input_tokens,output_tokens"
SUFFIX = {"config": ".json", "toml": ".toml", "catalog": ".toml"}
NUMBER = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")


# --- hostile files -----------------------------------------------------------
def measurements(rows: int = 12) -> str:
    shipped = (ROOT / "data/measurements/trtllm-v0.6.1.csv").read_text().splitlines()
    return "\n".join(shipped[: rows + 1]) + "\n"


def trace(rows: int = 60) -> str:
    lines = [f"{i * 0.5},{200 + i % 7},{50 + i % 5}" for i in range(rows)]
    return "\n".join([TRACE_HEAD, *lines]) + "\n"


CONFIG = (ROOT / "tests/fixtures/configs/Llama-3.1-8B.json").read_text()
TEAM = (ROOT / "tests/fixtures/team_catalog.toml").read_text()
PROFILE = (ROOT / "data/profiles/tutorial.toml").read_text()
TRAIN_CSV = sorted((ROOT / "data/measurements/training").glob("*.csv"))[0].read_text()
TRAIN_MEAS = "\n".join(TRAIN_CSV.splitlines()[:11]) + "\n"  # a header and 10 runs


def variants(valid: str, head: str) -> dict[str, bytes]:
    """Hostile contents for a file input whose valid content is `valid` (header `head`)."""
    found = {"valid": valid.encode(), "empty": b"", "binary": bytes(range(256)) * 8}
    found["latin1"] = (valid.rstrip("\n") + ",caf\xe9\n").encode("latin-1")
    found["cell131073"] = f"{head}\n{'a' * 131_073}\n".encode()
    found["1MB+1"] = (valid + "#" * 1_000_001).encode()[:1_000_001]
    found["bom"] = b"\xef\xbb\xbf" + valid.encode()
    found["crlf"] = valid.replace("\n", "\r\n").encode()
    found["wrong_header"] = b"a,b,c\n1,2,3\n"
    found["formula"] = f"{head}\n=1+1,@SUM(1),-2+3,+cmd\n".encode()
    return found


def make_files(tmp: Path) -> dict[str, dict[str, str]]:
    """Hostile files by input kind: {kind: {variant: path}} (plus devices, FIFO, missing, dir)."""
    os.mkfifo(tmp / "fifo")
    special = {"devzero": "/dev/zero", "fifo": str(tmp / "fifo"), "directory": str(tmp)}
    special["missing"] = str(tmp / "no/such.csv")
    tiny = TEAM.replace('"2039 GB/s"', '"1e-300 B/s"').replace("A100]", "Tiny]", 1)
    kinds = {"meas": variants(measurements(), MEAS_HEAD), "trace": variants(trace(), TRACE_HEAD)}
    kinds |= {"config": variants(CONFIG, "{"), "toml": variants(PROFILE, "[profile]")}
    kinds["catalog"] = variants(TEAM, "[hardware.X]") | {"tiny": tiny.encode()}
    kinds["train"] = variants(TRAIN_MEAS, TRAIN_MEAS.splitlines()[0])
    kinds["meas"]["rows10000"] = rows_file(MEAS_HEAD, MEAS_ROW, 10_000)
    kinds["trace"]["rows10000"] = trace(10_000).encode()
    kinds["config"]["nan"] = CONFIG.replace("4096", "NaN", 1).encode()
    (tmp / FORMULA).write_text(CONFIG)
    out = {kind: dict(special) for kind in kinds}
    out["config"]["formula_name"] = str(tmp / FORMULA)
    for kind, found in kinds.items():
        for name, data in found.items():
            path = tmp / f"{kind}-{name}{SUFFIX.get(kind, '.csv')}"
            path.write_bytes(data)
            out[kind][name] = str(path)
    return out


def rows_file(head: str, row: str, n: int) -> bytes:
    lines = [row.format(b=1 + i % 64, v=100 + i) for i in range(n)]
    return ("\n".join([head, *lines]) + "\n").encode()


# --- the CLI -----------------------------------------------------------------
BASE = {"solve": ["--model", "ResNet-50", "--hardware", "A100"], "train": TRAIN, "list": ["models"]}
BASE["sweep"] = [*BASE["solve"], "--batch-sizes", "1,8"]
BASE["decode"] = BASE["ops"] = [*LLM, "--context", "1024"]
BASE["serve"] = [*LLM, "--input-tokens", "512", "--output-tokens", "128"]
BASE["load"] = [*BASE["serve"], "--requests", "200"]
BASE["train-search"] = [*TRAIN, "--tp", "1,2", "--pp", "1,2"]


def options() -> dict[str, tuple[list, list[str]]]:
    """Each sub-command's (options with a value, formats), from the CLI's own parser."""
    from engine.cli.main import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    found = {}
    for name, parser in sub.choices.items():
        acts = [a for a in parser._actions if a.option_strings and a.nargs != 0]
        fmt = next((list(a.choices) for a in acts if a.dest == "format"), [])
        found[name] = ([a for a in acts if a.dest != "format" and not a.choices], fmt)
    return found


def cli_jobs(files: dict[str, dict[str, str]]) -> list[tuple[list[str], bool]]:
    """(argv, fresh): valid runs in every format (the first of each command in a fresh
    interpreter), each option with a hostile value (rotating values and formats), the files."""
    meas, k = files["meas"]["valid"], 0
    base = BASE | {"validate": [meas], "calibrate": [meas]}
    base["calibrate-train"] = [files["train"]["valid"]]  # the shipped tables: 10 s a run
    jobs = [(["calibrate-train", "--format=json"], True)]
    for cmd, (opts, formats) in options().items():
        for i, fmt in enumerate(formats or [None]):
            jobs.append(([cmd, *base[cmd], *(["--format", fmt] if fmt else [])], i == 0))
        for opt in opts:
            flag, pool = opt.option_strings[0], NUMBERS if opt.type in (int, float) else TEXTS
            value, k = pool[k % len(pool)], k + 1
            fmt = ["--format", formats[k % len(formats)]] if formats else []
            jobs.append(([cmd, *strip(base[cmd], flag), f"{flag}={value}", *fmt], False))
    return jobs + [(argv, False) for argv in special_jobs(files, base)]


def strip(args: list[str], flag: str) -> list[str]:
    """`args` without `flag` and its value (and --model, for a --model-config or --gpt-shape)."""
    drop = {flag, "--model"} if flag in ("--model-config", "--gpt-shape") else {flag}
    gone = {i + 1 for i, a in enumerate(args) if a in drop}
    return [a for i, a in enumerate(args) if a not in drop and i not in gone]


def special_jobs(files: dict[str, dict[str, str]], base: dict) -> list[list[str]]:
    def run(cmd: str, flag: str, value: str, fmt: str = "json") -> list[str]:
        return [cmd, *strip(base[cmd], flag), f"{flag}={value}", f"--format={fmt}"]

    j, f = "--format=json", files
    jobs = [["--catalog=", "solve", *base["solve"]], ["--catalog", "", "list", "models"]]
    jobs += [[f"--catalog={path}", "list", "hardware", j] for path in f["catalog"].values()]
    for cmd in ("solve", "sweep", "decode", "serve", "ops"):  # a 1e-300 B/s chip
        jobs.append([f"--catalog={f['catalog']['tiny']}", *run(cmd, "--hardware", "Tiny")])
    jobs += [[c, path, j] for path in f["meas"].values() for c in ("validate", "calibrate")]
    jobs += [["calibrate-train", path, j] for path in f["train"].values()]
    jobs += [run("load", "--trace", path) for path in f["trace"].values()]
    csv_cmds = ("ops", "sweep", "train", "train-search")
    for i, path in enumerate(f["config"].values()):
        cmd = ("solve", "serve", "decode", "load", *csv_cmds)[i % 8]
        jobs.append(
            run(
                cmd=cmd, flag="--model-config", value=path, fmt="csv" if cmd in csv_cmds else "json"
            )
        )
    jobs += [
        run(cmd=c, flag="--model-config", value=f["config"]["formula_name"], fmt="csv")
        for c in csv_cmds
    ]
    jobs += [run("serve", "--profile", path) for path in f["toml"].values()]
    jobs += [["validate", f["meas"]["valid"], f"--profile={p}", j] for p in f["toml"].values()]
    outs = ("/no/such/x.toml", tempfile.gettempdir(), "/dev/full")
    jobs += [["calibrate", f["meas"]["valid"], f"--out={p}"] for p in outs]
    jobs += [["calibrate-train", f["train"]["valid"], f"--out={p}"] for p in outs]
    many = ",".join(str(i) for i in range(1, 20_001))
    for batches in (many, "1..100000", "0", "-1", "1e3", ",,,", "", "1,1,1", "nan"):
        jobs.append(run("sweep", "--batch-sizes", batches))
    jobs += [run("solve", "--batch-size", str(10**30)), run("decode", "--context", str(10**12))]
    jobs += [run("serve", "--batch-size", "1000000000"), run("serve", "--efficiency", "1e-320")]
    jobs += [run("serve", "--layer-overhead-us", "1e308"), run("load", "--requests", "10**9")]
    jobs += [run("load", "--requests", "1000000000"), run("train-search", "--gpus", "1..100000")]
    return jobs


def run_cli(argv: list[str], fresh: bool) -> tuple[str, list[str], float]:
    """Worker: one CLI run, `python -m engine` in a fresh interpreter (`fresh`), else the same
    entry (engine/__main__.py through runpy) in a child forked from this worker, which imported
    the engine once (a run costs ms, not the 1 s of imports); (command, problems, seconds)."""
    from types import SimpleNamespace

    import engine.cli.main  # noqa: F401 -- imported once; every forked run starts from here

    os.environ.pop("ROOFLINE_CATALOG", None)  # no team catalogue of the machine's
    start, shown = time.monotonic(), "python -m engine " + " ".join(short(a) for a in argv)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        if fresh:
            cmd = [sys.executable, "-m", "engine", *argv]
            proc = subprocess.Popen(cmd, cwd=ROOT, stdout=out, stderr=err, preexec_fn=limit)
            pid = proc.pid
        else:
            sys.stdout.flush(), sys.stderr.flush()
            if (pid := os.fork()) == 0:
                child(argv, out.fileno(), err.fileno())
        code, deadline = None, start + CLI_TIMEOUT
        while code is None and time.monotonic() < deadline:
            done, status = os.waitpid(pid, os.WNOHANG)
            code = os.waitstatus_to_exitcode(status) if done else time.sleep(0.01)
        if code is None:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        if fresh:
            proc.returncode = -9 if code is None else code  # reaped here, not by Popen
        if code is None:
            return shown, [f"timeout after {CLI_TIMEOUT} s"], time.monotonic() - start
        text = [f.seek(0) or f.read().decode(errors="replace") for f in (out, err)]
    result = SimpleNamespace(returncode=code, stdout=text[0], stderr=text[1])
    return shown, cli_problems(argv, result), time.monotonic() - start


def child(argv: list[str], out: int, err: int) -> None:
    """In the forked child: `python -m engine *argv`, as the interpreter runs it."""
    import runpy
    import traceback

    code = 1
    try:
        limit(), os.dup2(out, 1), os.dup2(err, 2), os.chdir(ROOT)
        sys.argv = ["python -m engine", *argv]
        runpy.run_module("engine", run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
        if isinstance(exc.code, str):
            print(exc.code, file=sys.stderr)
    except BaseException:  # as the interpreter: the traceback, exit status 1
        traceback.print_exc()
    finally:
        sys.stdout.flush(), sys.stderr.flush()
        os._exit(code)


def cli_problems(argv: list[str], out) -> list[str]:
    err, problems = out.stderr.strip(), []
    problems += [f"exit {out.returncode}"] * (out.returncode not in (0, 2))
    problems += ["traceback: " + err.rsplit("\n", 1)[-1][:200]] * ("Traceback" in err)
    lines = len(err.splitlines())
    bad = out.returncode == 2 and lines != 1
    problems += [f"exit 2 with {lines} stderr lines: {err[:120]!r}"] * bad
    fmt = next((a.split("=", 1)[1] for a in argv if a.startswith("--format=")), None)
    fmt = argv[argv.index("--format") + 1] if "--format" in argv else fmt
    if out.returncode == 0 and fmt == "json":
        try:
            json.loads(out.stdout, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))
        except ValueError as exc:
            problems.append(f"exit 0, not strict JSON: {str(exc)[:120]}")
    elif out.returncode == 0 and fmt == "csv":
        cells = [c for row in csv.reader(io.StringIO(out.stdout)) for c in row]
        live = [c for c in cells if c[:1] in ("=", "+", "-", "@") and not NUMBER.fullmatch(c)]
        live += [c for c in cells if c.strip().lower() in ("nan", "inf", "-inf", "infinity")]
        problems += [f"exit 0, CSV cell is a formula or non-finite: {c[:80]!r}" for c in live[:1]]
    elif out.returncode == 0 and re.search(r"\b(nan|inf)\b", out.stdout, re.I):
        problems.append("exit 0, the table shows nan/inf")
    return problems


def short(arg: str) -> str:
    return arg if len(arg) <= 70 else f"{arg[:50]}…({len(arg):,} chars)"


# --- share links -------------------------------------------------------------
JUNK = ["abc", "-1", "0", "1e309", "nan", "x" * 3000, MD, "<script>alert(1)</script>"]
JUNK += ["1..100000", "inf", "", "1,1,1", "-0", "1" + ",1" * 5000]
COMPONENTS: list = []  # AppTest rescans the installed packages unless given this


def page_files() -> list[str]:
    return ["app.py", *sorted(f"pages/{p.name}" for p in (ROOT / "pages").glob("[!_]*.py"))]


def declared(page: str) -> list:
    """The page's declared link parameters (ui/<page>/link.py `declare`), or []."""
    import engine

    if page == "app.py":
        return []
    module = importlib.import_module(f"ui.{Path(page).stem}.link")
    first = next(iter(inspect.signature(module.declare).parameters), None)
    if first == "lesson":  # /learn: one link per lesson; every lesson's parameters
        found = {p.name: p for lesson in module.DEFAULTS for p in module.declare(lesson)}
        return list(found.values())
    return list(module.declare(*([engine.load_catalog()] if first else [])))


def link_jobs() -> list[tuple[str, dict]]:
    jobs, k = [], 0
    for page in page_files():
        params = declared(page)
        names = [p.name for p in params]
        for i in range(0, len(names), 2):  # each declared parameter, two at a time
            query, k = {n: JUNK[(k + j) % len(JUNK)] for j, n in enumerate(names[i : i + 2])}, k + 2
            if "model_config" in query:
                query["model"] = "config.json"
            jobs.append((page, query))
        for value in (MD, "1e309", "nan") if names else (MD,):
            jobs.append((page, dict.fromkeys(names or ["model", "hardware", "q"], value)))
        twice = {p.name: [p.write(p.default) if p.default else "1"] * 2 for p in params}
        jobs.append((page, twice or {"model": ["A100", "H100"]}))
        jobs.append((page, {"zz_unknown": "1", "lang": "xx", "<script>": MD, "a" * 300: "1"}))
        jobs.append((page, {f"zz_{i}": MD for i in range(45)} | {"lang": "xx"}))
    return jobs


def open_app(page: str):
    from streamlit.logger import set_log_level
    from streamlit.testing.v1 import AppTest

    set_log_level("error")  # not AppTest's bare-mode warnings, one a run
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=PAGE_TIMEOUT)
    if COMPONENTS:
        at._bidi_component_manager = COMPONENTS[0]
    if page != "app.py":
        at.switch_page(page)
    return at


def page_problems(at) -> list[str]:
    """An exception; user text rendered as live markdown (bodies, labels, help; code spans
    aside); a payload in an HTML element."""
    problems = [f"exception: {e.value[:200]}" for e in at.exception]
    stack, texts = [at._tree], set()
    while stack:
        node = stack.pop()
        stack.extend(getattr(node, "children", {}).values())
        proto, kind = getattr(node, "proto", None), getattr(node, "type", "")
        if kind == "html" or getattr(proto, "allow_html", False):
            problems += ["payload in an HTML element"] * (
                "<script" in str(getattr(proto, "body", ""))
            )
        if kind not in ("text", "code", "json"):
            found = (getattr(proto, f, None) for f in ("body", "label", "help"))
            texts |= {re.sub(r"`[^`\n]*`", "", t) for t in found if isinstance(t, str)}
    problems += [
        f"raw markdown rendered: {t[:120]!r}" for t in sorted(texts) if any(m in t for m in LIVE)
    ]
    if getattr(at, "_bidi_component_manager", None) is not None and not COMPONENTS:
        COMPONENTS.append(at._bidi_component_manager)
    return problems


def run_link(page: str, query: dict) -> tuple[str, list[str], float]:
    """Worker: `page` opened with `query`; (the link, its problems, seconds)."""
    from urllib.parse import urlencode

    start = time.monotonic()
    shown = "/" + Path(page).stem.replace("app", "") + "?" + short(urlencode(query, doseq=True))
    try:
        at = open_app(page)
        at.query_params.update(query)
        at.run()
        problems = page_problems(at)
    except Exception as exc:
        problems = [f"{type(exc).__name__}: {str(exc)[:200]}"]
    seconds = time.monotonic() - start
    problems += [f"took {seconds:.0f} s"] if seconds > PAGE_TIMEOUT else []
    return shown, problems, seconds


# --- uploads -----------------------------------------------------------------
SAYS = {"empty": r"empty|no rows|no data|missing|header|nothing|0 bytes", "json": r"json"}
SAYS |= {"binary": r"utf-?8|text|binary|column|header|json|toml", "latin1": r"utf-?8|encod|text"}
SAYS |= {"cell131073": r"row|field|cell|long|larger|character|limit|column"}
SAYS |= {"1MB+1": r"limit|bytes|too large|larger|MB", "wrong_header": r"column|header"}
SAYS |= {"formula": r"number|column|row|json|toml|field", "not_json": r"json"}
SAYS |= {"nan": r"nan|number|finite|hidden_size", "deep": r"json|deep|nest"}
SAYS |= {"rows10000": r"rows|limit", "bom": r"BOM|utf"}  # what a refusal must mention


def upload_jobs() -> list[tuple]:
    """(page, query, uploader key, file name, bytes, variant, kind): kind "ok" must be taken,
    "bad" refused naming the problem, "any" taken or refused naming it."""
    meas, tr = variants(measurements(), MEAS_HEAD), variants(trace(), TRACE_HEAD)
    cfg, cat = variants(CONFIG, "{"), variants(TEAM, "[hardware.X]")
    cfg |= {"not_json": b"hello", "nan": CONFIG.replace("4096", "NaN", 1).encode()}
    junk = dict.fromkeys(map(str, range(9_000)), 0) | json.loads(CONFIG)  # 98 kB, 9k keys
    cfg |= {"deep": b"[" * 100_000, "junk_keys": json.dumps(junk).encode()}
    meas["rows10000"] = rows_file(MEAS_HEAD, MEAS_ROW, 10_000)
    tr["rows10000"] = trace(10_000).encode()
    cat["hostile_ids"] = TEAM.replace('"Team-X1"', json.dumps(MD)).encode()
    load = {"model": "Llama-3.1-8B", "hardware": "H100", "tp": "1", "mode": "trace"}
    where = [("accuracy", {}, "acc:upload", meas, ("mine.csv", MD + ".csv"))]
    where += [("load", load, "load:trace.file", tr, ("trace.csv", MD + ".csv"))]
    where += [("catalogue", {}, "catalogue:upload", cat, (MD + ".toml",))]
    for i, (variant, data) in enumerate(cfg.items()):  # config.json: /decode, /load, /train
        page, name = ("decode", "load", "train")[i % 3], (FORMULA, MD + ".json", "c.json")[i % 3]
        key = f"{page}:model_config.file"
        where.append((page, {"model": "config.json"}, key, {variant: data}, (name,)))
    good, jobs = {"valid", "bom", "crlf", "junk_keys", "hostile_ids"}, []
    for page, query, key, found, names in where:
        either = {"rows10000"} | ({"empty"} if page == "catalogue" else set())
        either |= {"bom"} if key.endswith("model_config.file") else set()  # JSON: BOM optional
        for i, (variant, data) in enumerate(found.items()):
            kind = "any" if variant in either else "ok" if variant in good else "bad"
            jobs.append(
                (f"pages/{page}.py", query, key, names[i % len(names)], data, variant, kind)
            )
    fit = ("pages/accuracy.py", {}, "acc:upload", MD + ".csv", meas["valid"], "valid+fit", "ok")
    return [*jobs, fit]


def run_upload(page, query, key, name, data, variant, kind) -> tuple[str, list[str], float]:
    """Worker: one upload; (the page, uploader, file and variant; its problems; seconds)."""
    start = time.monotonic()
    shown = f"/{Path(page).stem} {key} {short(name)!r} ({variant}, {len(data):,} bytes)"
    try:
        at = open_app(page)
        at.query_params.update(query)
        at.run()
        at.file_uploader(key=key).set_value((name, data, "application/octet-stream")).run()
        if variant == "valid+fit" and not at.exception:  # the "Fitted on <name>" caption
            at.button(key="acc:fit").click().run()
        problems = page_problems(at)
        said = " ".join(str(e.value) for e in [*at.error, *at.warning])
        tables = [t.value for t in at.dataframe if "Problem" in getattr(t.value, "columns", ())]
        said = (said + " ".join(t.to_string() for t in tables)).replace("\\", "")
        errors = " ".join(str(e.value) for e in at.error).replace("\\", "")
        if kind == "ok" and errors:
            problems.append(f"a good file was refused: {errors[:160]!r}")
        elif kind != "ok" and said and not re.search(SAYS.get(variant, "."), said, re.I):
            problems.append(f"the refusal does not name the problem: {said[:160]!r}")
        elif kind == "bad" and not said:
            problems.append("a bad file was taken without an error or warning")
    except Exception as exc:
        problems = [f"{type(exc).__name__}: {str(exc)[:200]}"]
    seconds = time.monotonic() - start
    problems += [f"took {seconds:.0f} s"] if seconds > PAGE_TIMEOUT else []
    return shown, problems, seconds


# --- the run -----------------------------------------------------------------
def run_kind(label: str, worker, jobs: list) -> tuple[int, list[str]]:
    start = time.monotonic()
    with ProcessPoolExecutor(WORKERS, mp_context=get_context("spawn")) as pool:
        results = list(pool.map(worker, *zip(*jobs, strict=True)))
    failures = [f"  FAIL {shown}: {'; '.join(p)}" for shown, p, _ in results if p]
    slowest = max(results, key=lambda r: r[2])
    counts = f"{len(results)} runs, {len(results) - len(failures)} passed, {len(failures)} failed"
    took = f"{time.monotonic() - start:.0f} s; slowest {slowest[2]:.1f} s: {slowest[0][:80]}"
    print(f"{label}: {counts} ({took})", *failures, sep="\n", flush=True)
    return len(results), failures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a third of each kind")
    parser.add_argument("--only", default="cli,links,uploads", help="comma-separated kinds")
    args = parser.parse_args()
    kinds, start, runs, failed = args.only.split(","), time.monotonic(), 0, 0
    with tempfile.TemporaryDirectory(prefix="probe-") as tmp:
        sys.path.insert(0, str(ROOT / "bench"))  # workers by module name: AppTest replaces
        import probe as me  # the worker's __main__ with the page it runs

        plan = {
            "cli": ("CLI", me.run_cli, lambda: cli_jobs(make_files(Path(tmp)))),
            "links": ("Links", me.run_link, link_jobs),
            "uploads": ("Uploads", me.run_upload, upload_jobs),
        }
        for kind in kinds:
            label, worker, make = plan[kind]
            jobs = make()[:: 3 if args.quick else 1]
            n, failures = run_kind(label, worker, jobs)
            runs, failed = runs + n, failed + len(failures)
    took = time.monotonic() - start
    print(f"Total: {runs} runs, {runs - failed} passed, {failed} failed in {took:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
