#!/usr/bin/env python3
"""Write python/ragstats/_api.py: one keyword-argument function per analysis, each calling
the library's front door (`ragstats._ragstats.analyse`) with its inputs and settings.

The keywords and their types are the analysis's settings (their JSON schemas,
`ragstats._ragstats.settings_schema`) and inputs (`library_analyses()`); the docstring, the
order of the keywords and their defaults are the command line's (`cargo run --example
api_spec`: clap's definitions, with the `--help` examples as Python calls), so a keyword
reads as its flag does (`--max-reads` -> `max_reads`). tests/python/test_api.py checks the
file is current, so the Python API cannot drift from the library or the CLI. Run after
changing a setting or a flag:

    maturin develop && python scripts/gen-python-api.py
"""

import json
import keyword
import os
import pathlib
import re
import shlex
import subprocess
import sys
import textwrap

OUT = pathlib.Path(__file__).resolve().parents[1] / "python" / "ragstats" / "_api.py"

def native_module():
    """The built native module, loaded without the package (whose __init__ imports the
    file this script writes): the copy `maturin develop` put beside the sources, else the
    installed one."""
    import glob
    import importlib.machinery
    import importlib.util

    here = sorted(glob.glob(str(OUT.parent / "_ragstats*.so")) + glob.glob(str(OUT.parent / "_ragstats*.pyd")))
    if not here:
        spec = importlib.util.find_spec("ragstats")
        pkg = pathlib.Path(spec.origin).parent
        here = sorted(glob.glob(str(pkg / "_ragstats*.so")) + glob.glob(str(pkg / "_ragstats*.pyd")))
    loader = importlib.machinery.ExtensionFileLoader("ragstats._ragstats", here[0])
    spec = importlib.util.spec_from_loader("ragstats._ragstats", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module

# The commands `ragstats_cli::cmd::outcome` runs as values, and their Python names.
COMMANDS = {
    "variance": "variance",
    "forecast": "forecast",
    "bootstrap": "bootstrap",
    "merge": "merge",
    "compare": "compare",
    "coverage": "coverage",
    "consistency": "consistency",
    "score-answers": "score_answers",
    "correlate": "correlate",
    "subsets": "subsets",
    "cost": "cost",
    "efficiency": "efficiency",
    "allocate": "allocate",
    "plan": "plan",
    "run-audit": "run_audit",
    "simulate": "simulate",
    "slice": "slice",
    "mcq validate": "mcq_validate",
    "mcq score": "mcq_score",
    "mcq cost": "mcq_cost",
    "mcq compare": "mcq_compare",
    "mcq filter": "mcq_filter",
    "mcq agree": "mcq_agree",
    "sequential": "sequential",
    "gate": "gate",
    "labels sample": "labels_sample",
    "labels agreement": "labels_agreement",
}
# Flags the Python layer sets itself: the result carries every format, and `plot=True`
# asks for the figure.
OWN = {"format", "json", "plot"}



def py_name(arg):
    n = arg["name"]
    return n + "_" if keyword.iskeyword(n) else n


def literal(text):
    for conv in (int, float):
        try:
            v = conv(text)
            return repr(v)
        except ValueError:
            pass
    return repr(text)


def annotation(arg, schema=None):
    """A keyword's type: from the settings' JSON schema for an analysis of the library's
    front door (`schema`: its properties and definitions), else from the flag."""
    if arg["switch"]:
        return "bool"
    if schema is not None:
        props, defs = schema
        prop = props.get(arg["name"])
        if prop is not None:
            t = schema_type(prop, defs)
            if arg["default"] is None and not arg["required"] and not t.startswith("Optional["):
                t = f"Optional[{t}]"
            return t
    if arg["repeated"]:
        return "Union[Any, Sequence[Any], None]"
    return "Any"


def input_type(spec, arg):
    """The type of an input keyword: `Input` (a path, a list of logs, a table or records)
    for an analysis of the front door, else as the flag has it."""
    if spec["name"] in LIBRARY:
        return "Input" if arg["required"] else "Optional[Input]"
    return annotation(arg)


def schema_type(prop, defs):
    """The Python type of a JSON schema (schemars' output for a settings field)."""
    if "$ref" in prop:
        return schema_type(defs[prop["$ref"].split("/")[-1]], defs)
    if prop.get("format") == "path":
        return 'Union[str, "os.PathLike[str]"]'
    if "enum" in prop:
        return "Literal[" + ", ".join(repr(v) for v in prop["enum"]) + "]"
    for key in ("oneOf", "anyOf"):
        if key in prop:
            alts = prop[key]
            if all("const" in a for a in alts):
                return "Literal[" + ", ".join(repr(a["const"]) for a in alts) + "]"
            types = [schema_type(a, defs) for a in alts]
            nullable = "None" in types
            types = [t for t in types if t != "None"]
            t = types[0] if len(types) == 1 else "Union[" + ", ".join(types) + "]"
            return f"Optional[{t}]" if nullable else t
    t = prop.get("type")
    if isinstance(t, list):
        inner = [x for x in t if x != "null"]
        base = schema_type({**prop, "type": inner[0]}, defs)
        return f"Optional[{base}]" if "null" in t else base
    return {
        "string": lambda: "str",
        "integer": lambda: "int",
        "number": lambda: "float",
        "boolean": lambda: "bool",
        "null": lambda: "None",
        "array": lambda: f"Sequence[{schema_type(prop.get('items', {}), defs)}]",
        "object": lambda: f"Mapping[str, {schema_type(prop.get('additionalProperties', {}), defs)}]",
    }.get(t, lambda: "Any")()


def example_call(fn, example, spec):
    """`stats variance p.csv --contrast a-b` as `ragstats.variance("p.csv", contrast="a-b")`."""
    words = shlex.split(example)[1 + len(spec["name"].split()):]
    by_long = {a["long"]: a for a in spec["args"] if a["long"]}
    positional = [a for a in spec["args"] if not a["long"]]
    pos, kw = [], []
    i = 0
    while i < len(words):
        w = words[i]
        if w.startswith("--"):
            arg = by_long.get(w)
            if arg is None or arg["name"] in OWN:
                i += 1 + (arg is not None and not arg["switch"])
                continue
            if arg["switch"]:
                kw.append(f"{py_name(arg)}=True")
                i += 1
            else:
                value = words[i + 1]
                if arg["repeated"]:
                    prev = [k for k in kw if k.startswith(py_name(arg) + "=[")]
                    if prev:
                        kw.remove(prev[0])
                        items = prev[0][len(py_name(arg)) + 2 : -1]
                        kw.append(f"{py_name(arg)}=[{items}, {value!r}]")
                    else:
                        kw.append(f"{py_name(arg)}=[{value!r}]")
                else:
                    kw.append(f"{py_name(arg)}={literal(value)}")
                i += 2
        else:
            pos.append(repr(w))
            i += 1
    if len(positional) == 1 and positional[0]["repeated"] and len(pos) > 1:
        pos = [f"[{', '.join(pos)}]"]
    # A repeated flag given once reads as the plain value, as a user would write it.
    kw = [re.sub(r"^(\w+)=\[([^,\[\]]*)\]$", r"\1=\2", k) for k in kw]
    return f"ragstats.{fn.replace('mcq_', 'mcq.')}({', '.join(pos + kw)})"


def function(spec, fn):
    args = [a for a in spec["args"] if a["name"] not in OWN]
    schema = None
    if spec["name"] in LIBRARY:
        text = native_module().settings_schema(spec["name"])
        if text is not None:
            doc = json.loads(text)
            schema = (doc.get("properties", {}), doc.get("$defs", {}))
    has_plot = any(a["name"] == "plot" for a in spec["args"])
    if schema is not None:
        # A flag the settings lack is the command line's own (`stats coverage --out`
        # writes the text it prints): Python has the result's text instead.
        roles = LIBRARY[spec["name"]]
        args = [a for a in args if a["name"] in schema[0] or a["name"] in roles]
    positional = [a for a in args if not a["long"]]
    flags = [a for a in args if a["long"]]
    params = []
    for a in positional:
        if a["required"]:
            params.append(f"{py_name(a)}: {input_type(spec, a)}")
        else:
            params.append(f"{py_name(a)}: {input_type(spec, a)} = None")
    params.append("*")
    for a in flags:
        default = "False" if a["switch"] else ("None" if a["default"] is None or a["repeated"] else literal(a["default"]))
        req = a["required"] and not a["switch"]
        t = input_type(spec, a) if a["name"] in LIBRARY.get(spec["name"], ()) else annotation(a, schema)
        # A keyword left at None takes the analysis's default, whatever its type.
        if not req and default == "None" and not t.startswith("Optional[") and t != "Any" and not t.startswith("Union[Any"):
            t = f"Optional[{t}]"
        params.append(f"{py_name(a)}: {t}" + ("" if req else f" = {default}"))
    if has_plot:
        params.append("plot: bool = False")
    params.append("progress: Optional[Callable[[int, int], Any]] = None")
    doc = [spec["about"], ""]
    doc.append(f"The analysis of ``stats {spec['name']}``; keywords are its flags.")
    if spec["examples"]:
        doc += ["", "Example::", ""]
        doc += [f"    {example_call(fn, e, spec)}" for e in spec["examples"][:2]]
    doc += ["", "Arguments:", ""]
    for a in args:
        flag = a["long"] or a["name"].upper()
        default = f" (default {a['default']})" if a["default"] and not a["switch"] else ""
        choices = f" [{', '.join(a['choices'])}]" if a["choices"] and not a["switch"] else ""
        doc.append(f"- ``{py_name(a)}`` ({flag}){choices}{default}: {a['help']}")
    if has_plot:
        doc.append("- ``plot``: also draw the command's figure; ``Result.figure()`` returns its SVG.")
    doc.append("- ``progress``: called as ``progress(done, total)`` while a long call runs.")
    if spec["name"] in LIBRARY:
        roles = LIBRARY[spec["name"]]
        inputs = [a for a in args if a["name"] in roles]
        settings = [a for a in flags if a["name"] not in roles]
        body = ["inputs: dict = {" + ", ".join(f"{a['name']!r}: {py_name(a)}" for a in inputs) + "}"]
        body.append("settings: dict = {" + ", ".join(f"{a['name']!r}: {py_name(a)}" for a in settings) + "}")
        plot = "plot" if has_plot else "False"
        body.append(f"return _analyse({spec['name']!r}, inputs, settings, {plot}, progress)")
        return render(fn, params, doc, body)
    sys.exit(f"`{spec['name']}` is not an analysis of the native module's front door")


def render(fn, params, doc, body):
    doc_text = textwrap.indent("\n".join(doc).replace('"""', "'''"), "    ").rstrip()
    return (
        f"def {fn}(\n    " + ",\n    ".join(params) + ",\n) -> Result:\n"
        f'    """{doc_text.lstrip()}\n    """\n'
        + "".join(f"    {b}\n" for b in body)
    )


HEADER = '''"""The analyses, one function per command (generated by scripts/gen-python-api.py from the
analyses' settings and the command line's help: do not edit; regenerate after changing a
setting or a flag)."""

# fmt: off
import os
from typing import Any, Callable, Literal, Mapping, Optional, Sequence, Union

from ._call import Input, Result, _analyse

'''


def merge_more(spec):
    """A command's `more` positional (further logs read with its first path as one panel)
    becomes the first positional taking a list: `ragstats.variance(["a.eval", "b.eval"])`."""
    args = spec["args"]
    positional = [a for a in args if not a["long"]]
    # Only PANEL LOG…; `mcq compare A B [MORE…]` keeps its own `more` list.
    if [a["name"] for a in positional][1:] == ["more"]:
        args[:] = [a for a in args if a["name"] != "more"]
        first = next(a for a in args if not a["long"])
        first["repeated"] = True
        first["help"] += "; a list of evaluation logs is read as one panel"
    return spec


# The analyses the native module runs through the library's front door, with their inputs'
# roles (typed settings, no command line in between).
LIBRARY = {}


def command_specs():
    """The command line's commands as JSON (examples/api_spec.rs, built by cargo in the
    repository's target directory or $CARGO_TARGET_DIR)."""
    root = pathlib.Path(__file__).resolve().parents[1]
    out = subprocess.run(
        ["cargo", "run", "-q", "--example", "api_spec"],
        cwd=root, capture_output=True, text=True, env=os.environ,
    )
    if out.returncode != 0:
        sys.exit(f"cargo run --example api_spec failed:\n{out.stderr}")
    return out.stdout


def main():
    LIBRARY.update(dict(native_module().library_analyses()))
    specs = {s["name"]: merge_more(s) for s in json.loads(command_specs())}
    parts = [HEADER]
    for name, fn in COMMANDS.items():
        parts.append("\n" + function(specs[name], fn) + "\n")
    text = "".join(parts).rstrip() + "\n"
    if "--check" in sys.argv:
        current = OUT.read_text() if OUT.exists() else ""
        if current != text:
            sys.exit(f"{OUT} is not current: run scripts/gen-python-api.py")
        return
    OUT.write_text(text)


if __name__ == "__main__":
    main()
