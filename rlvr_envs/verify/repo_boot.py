"""The program that starts pytest for a graded repository run: `python -s -c <this file's text>
<pytest args>`, with a per-run key on stdin as hex and a newline. Never imported:
`rlvr_envs.verify.repo` reads it as text (`PYTEST_BOOT`).

The code under test runs in this interpreter, so what makes a verdict is built out of its
reach before any of it is imported:

- the key is read from stdin one byte at a time (no buffer keeps it); stdin then reads
  /dev/null, the real stdout becomes a private descriptor and fd 1 goes to stderr; the
  process is made non-dumpable (no other process of its uid can read its memory);
- the report plugin's hooks and the functions they use are *sealed* (`_seal`): compiled from
  `_SOURCE`, then rebuilt with the key, the descriptor and every object they use as constants
  of their code, with empty globals and no closure or default, so nothing can be rebound or
  read out of them but through their code;
- an audit hook, added when pytest registers the plugin (before any conftest runs), refuses
  to hand out that code (`__code__`, a frame's `f_code`) and the other ways to the key or to
  a running frame: `gc` walks, a tracer or profiler (`sys.settrace` is a guard that lets
  `None` through), a new audit hook, setting a sealed function's `__code__` (pytest's own are
  watched by `replaced`, a test's by `intact`), `ctypes` calls, raw
  memory under /proc, and imports of ctypes and the test C modules. A refusal raises and
  voids the stream (a line with no MAC); a refused import raises ImportError and voids
  nothing. The hook and the guards are sealed too, but their code holds nothing to hide
  (`_VISIBLE`), so a traceback through them can be shown;
- a test phase is recorded only when pluggy calls the hook for `call_and_report` with that
  very report, for an item pytest collected whose class, instance attributes and test
  function are as collected; a subtest only when it failed; the exit status only from
  `wrap_session` for the session collection began with, once, and nothing after it;
  anything else is recorded as `{"tampered": ...}`;
- before every record the plugin compares what of pytest and pluggy makes verdicts, the
  registered plugins and the hook implementations with what they were when collection began
  (`replaced`).

`read_stream` in `rlvr_envs.verify.repo` checks every line's MAC and the unbroken sequence.
Limits are in docs/repo.md ("Known limits").
"""

import os
import sys

if __name__ != "__main__":
    raise ImportError("rlvr_envs.verify.repo_boot is a program for `python -c`, not a module")


def _read_key():
    line = b""
    while not line.endswith(b"\n"):
        byte = os.read(0, 1)
        if not byte:
            break
        line += byte
    return bytes.fromhex(line.decode().strip())


_KEY = _read_key()
_null = os.open(os.devnull, os.O_RDONLY)
os.dup2(_null, 0)
os.close(_null)
_OUT = os.dup(1)
os.set_inheritable(_OUT, False)
os.dup2(2, 1)
_cwd = os.getcwd()
sys.path[:] = [p for p in sys.path if p not in ("", ".", _cwd)]
_roots = [r for r in os.environ.pop("RLVR_IMPORT_ROOTS", "").split(os.pathsep) if r]
_conftests = set()  # the tree's conftest files before any of its code runs
for _dir, _dirs, _files in os.walk(_cwd):
    _dirs[:] = [d for d in _dirs if d != ".git"]
    if "conftest.py" in _files:
        _conftests.add(os.path.realpath(os.path.join(_dir, "conftest.py")))


try:  # PR_SET_DUMPABLE 0; ctypes leaves sys.modules again (importing it later is refused)
    import ctypes
    ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)
    del ctypes
except Exception:  # noqa: BLE001, S110 - no ctypes or no prctl: the audit hook still holds
    pass
for _name in [n for n in sys.modules if n.split(".")[0] in ("ctypes", "_ctypes")]:
    del sys.modules[_name]

import _hashlib
import _json
import dis
import functools
import importlib
import posix
import types
import warnings

import _pytest.config
import _pytest.main
import _pytest.reports
import _pytest.runner
import pluggy
import pytest

_OURS = ("_pytest", "pytest", "pluggy")


def _ours(name):
    return isinstance(name, str) and name.split(".")[0] in _OURS


def _snapshot(code_of):
    """What of pytest and pluggy makes a verdict, as it is now (`code_of`: the sealed
    function that reads the code behind a function, method or property): every function of their modules
    (the default plugins imported first) with its code, every class bound in them, every
    descriptor of their classes (methods, properties, slots) with its code where it has one;
    each class with the set of its attribute names; the directories their code lives in."""
    for name in _pytest.config.default_plugins:
        try:
            importlib.import_module("_pytest." + name)
        except ImportError:
            pass
    watched, classes, seen, homes = [], [], set(), set()
    for module_name, module in sorted(sys.modules.items()):
        if not _ours(module_name) or module is None:
            continue
        if getattr(module, "__file__", None):
            homes.add(os.path.dirname(os.path.realpath(module.__file__)) + os.sep)
        for name, value in list(vars(module).items()):
            if isinstance(value, type) and _ours(value.__module__):
                watched.append((module_name + "." + name, module, name, value, None))
                if id(value) in seen:
                    continue
                seen.add(id(value))
                classes.append((value, frozenset(vars(value))))
                for attr, member in list(vars(value).items()):
                    if hasattr(type(member), "__get__"):
                        watched.append((value.__qualname__ + "." + attr, value, attr, member,
                                        code_of(member)))
            elif code_of(value) is not None:
                watched.append((module_name + "." + name, module, name, value, code_of(value)))
    return tuple(watched), tuple(classes), tuple(sorted(homes, key=len))


def _pluggy_codes(code_of):
    """The code of every function and method of pluggy: the frames a hook call runs through."""
    codes = set()
    for module_name, module in list(sys.modules.items()):
        if module_name.split(".")[0] != "pluggy" or module is None:
            continue
        for value in list(vars(module).values()):
            members = list(vars(value).values()) if isinstance(value, type) else [value]
            for member in members:
                if code_of(member) is not None:
                    codes.add(code_of(member))
    return frozenset(codes)


_SEALED = {"__builtins__": {}}  # the globals of the hidden functions (and how they are known)
_VISIBLE = {"__builtins__": {}}  # of the audit hook's, whose code a traceback may show
_FORBIDDEN_OPS = frozenset({"LOAD_GLOBAL", "LOAD_NAME", "STORE_GLOBAL", "STORE_NAME",
                            "DELETE_GLOBAL", "LOAD_DEREF", "STORE_DEREF", "LOAD_CLOSURE",
                            "LOAD_CLASSDEREF", "IMPORT_NAME", "LOAD_BUILD_CLASS",
                            "LOAD_ASSERTION_ERROR", "MAKE_FUNCTION"})


def _seal(function, values, namespace=_SEALED):
    """`function` rebuilt with each string constant "@name" replaced by `values[name]` and
    `namespace` (empty) as globals. It may read no global, no builtin and no closure cell
    (checked here)."""
    def swap(code):
        for op in dis.get_instructions(code):
            if op.opname in _FORBIDDEN_OPS:
                raise SystemExit(f"rlvr boot: {code.co_name} uses {op.opname} {op.argval}")
        consts = tuple(values[c[1:]] if isinstance(c, str) and c.startswith("@") else c
                       for c in code.co_consts)
        return code.replace(co_consts=consts)
    return types.FunctionType(swap(function.__code__), namespace, function.__name__)


# The sealed functions. Every object they use is a constant of their code ("@name"), read
# where it is used: nothing shared sits in a local variable, which a signal handler or a
# function they call could read from their frame. Compiled with SyntaxWarnings off (a call of
# or a subscript on a string constant is what `_seal` replaces).
_SOURCE = r'''
def code_of(value):
    """The code behind a function, method, classmethod, staticmethod or property (replacing
    `__code__` changes what runs without changing the function's identity), or None."""
    type_ = "@type"
    if type_(value) is "@property":
        value = value.fget
    elif type_(value) is "@classmethod" or type_(value) is "@staticmethod" or \
            type_(value) is "@method_type":
        value = value.__func__
    if type_(value) is "@function_type":
        return value.__code__
    return None


def void():
    """Void the report stream: a line with no MAC makes the whole run tampered."""
    "@state"["open"] = False
    "@write"("@out", b"void: the run reached for the grader\n")


def emit(fields):
    """Write one record (`fields`: (name, str or int) pairs) with the next sequence number
    and its MAC. Built from immutable values only: a signal handler can read this frame's
    locals, and must find nothing to change in place."""
    type_ = "@type"
    str_ = "@str"
    quote = "@quote"
    if not "@state"["open"]:
        return
    "@state"["n"] += 1
    body = "{"
    for name, value in fields:
        if type_(value) is str_:
            body = body + quote(name) + ": " + quote(value) + ", "
        elif type_(value) is "@int":
            body = body + quote(name) + ": " + str_(value) + ", "
    body = (body + '"n": ' + str_("@state"["n"]) + "}").encode()
    data = body + b"\t" + "@digest"("@key", body, "sha256").hex().encode() + b"\n"
    while data:
        data = data["@write"("@out", data):]


def resolved(path):
    """Where the kernel says `path` leads (links and /proc/self followed), or None."""
    try:
        fd = "@open"(path, "@o_path")
    except:  # noqa: E722 - no name to look up in a sealed function
        return None
    try:
        return "@readlink"("/proc/self/fd/" + "@str"(fd))
    except:  # noqa: E722
        return None
    finally:
        "@close"(fd)


def settrace(function):
    """`sys.settrace` as the code under test sees it: clearing the tracer (as doctest does)
    is allowed; installing one is refused by the audit hook (a tracer can rewrite the locals
    of a running frame and jump over its lines)."""
    "@sys_settrace"(function)


def setprofile(function):
    """`sys.setprofile`, as `settrace`."""
    "@sys_setprofile"(function)


def audit(event, args):
    """Refuse what would read the hidden functions' code (the key is a constant of it),
    install a tracer, walk every object, load ctypes or read the process's raw memory. A
    refusal raises here and voids the report stream (an import refused raises ImportError
    and voids nothing: `try: import ctypes` degrades as without ctypes)."""
    type_ = "@type"
    refuse = False
    if event == "object.__getattr__":
        if args[1] == "__code__":
            refuse = type_(args[0]) is "@function_type" and args[0].__globals__ is "@sealed"
        elif args[1] == "f_code":
            refuse = type_(args[0]) is "@frame_type" and args[0].f_globals is "@sealed"
    elif event == "object.__setattr__":
        if type_(args[0]) is "@function_type" and (args[0].__globals__ is "@sealed" or
                                                  args[0].__globals__ is "@visible"):
            refuse = args[1] == "__code__" or args[1] == "__defaults__" or \
                args[1] == "__kwdefaults__"
    elif event == "sys.settrace" or event == "sys.setprofile":
        code = "@getframe"(1).f_code
        refuse = not (code is "@settrace_code" or code is "@setprofile_code") or \
            "@getframe"(1).f_locals.get("function") is not None
    elif event in "@refused_events" or event.startswith("ctypes."):
        refuse = True
    elif event == "import":
        if type_(args[0]) is "@str" and args[0].split(".")[0] in "@refused_imports":
            raise "@import_refused"("not available under the grader: " + args[0])
    elif event == "open" and "@getframe"(1).f_code is not "@resolved_code":
        path = args[0]
        if type_(path) is "@bytes":
            path = path.decode("utf-8", "surrogateescape")
        if type_(path) is "@str":
            where = "@resolved"(args[0])
            parts = (path if where is None else where).split("/")
            refuse = (where is None or where.startswith("/proc/")) and (
                "mem" in parts or "pagemap" in parts or "map_files" in parts)
    if refuse:
        "@void"()
        detail = args[1] if event.startswith("object.") else args[0] if args else ""
        raise "@refused"("refused by the grader: " + event + " " + "@str"(detail)[:200])


def called_by(code):
    """The frame that called the running hook through pluggy, if it runs `code`; else None.
    Frames: 0 here, 1 the hook method, 2 pluggy's `_multicall`, pluggy's frames, the caller."""
    frame = "@getframe"(2)
    if frame is None or "@pluggy_codes".get("@id"(frame.f_code)) is not frame.f_code:
        return None
    while frame is not None and "@pluggy_codes".get("@id"(frame.f_code)) is frame.f_code:
        frame = frame.f_back
    if frame is None or frame.f_code is not code:
        return None
    return frame


def allowed_late(plugin, plugins):
    """A plugin registered after collection began that pytest itself would register: a
    conftest module that was in the tree before any of the tree's code ran, or a module such
    a conftest names in `pytest_plugins`."""
    type_ = "@type"
    if type_(plugin) is not "@module_type":
        return False
    path = "@vars"(plugin).get("__file__")
    if type_(path) is "@str" and path.rsplit("/", 1)[-1] == "conftest.py":
        return "@resolved"(path) in "@conftests"
    name = "@vars"(plugin).get("__name__")
    for other in plugins:
        if type_(other) is not "@module_type":
            continue
        path = "@vars"(other).get("__file__")
        if type_(path) is not "@str" or "@resolved"(path) not in "@conftests":
            continue
        names = "@vars"(other).get("pytest_plugins", ())
        if type_(names) is "@str":
            names = (names,)
        if (type_(names) is "@list" or type_(names) is "@tuple") and name in names:
            return True
    return False


def replaced():
    """What of pytest's verdict-making was replaced since collection began, or None."""
    type_ = "@type"
    vars_ = "@vars"
    if "@len"("@baseline") == 0:
        return None
    for name, owner, attr, value, code in "@baseline"["watched"]:
        now = vars_(owner).get(attr, "@missing")
        if now is not value or code is not None and "@code_of"(now) is not code:
            return name
    for cls, names in "@baseline"["classes"]:
        if "@len"(vars_(cls)) == "@len"(names):
            continue
        for attr, value in "@tuple"(vars_(cls).items()):
            code = None if attr in names else "@code_of"(value)
            if code is None:
                continue
            known = False  # a method added: pytest's own code only
            for home in "@baseline"["homes"]:
                known = known or code.co_filename.startswith(home)
            if not known:
                return cls.__qualname__ + "." + attr
    manager = "@baseline"["manager"]
    if vars_(manager).get("_inner_hookexec", "@missing") is not "@baseline"["inner"]:
        return "PluginManager._inner_hookexec"
    plugins = "@tuple"(vars_(manager)["_name2plugin"].values())
    for plugin in plugins:
        if "@baseline_plugins".get("@id"(plugin)) is not plugin and \
                not "@allowed_late"(plugin, plugins):
            return "plugin " + type_(plugin).__name__
    for caller in "@tuple"(vars_(vars_(manager)["hook"]).values()):
        if type_(caller) is not "@hook_caller":
            continue
        hookexec = caller._hookexec
        if type_(hookexec) is not "@method_type" or hookexec.__self__ is not manager or \
                hookexec.__func__ is not "@pm_hookexec":
            return "HookCaller._hookexec of " + "@str"(caller.name)
        for impl in "@tuple"(caller._hookimpls):
            found = False
            for plugin in plugins:
                found = found or impl.plugin is plugin
            function = impl.function
            if not found or "@getattr"(impl.plugin, "@getattr"(function, "__name__", ""),
                                       None) != function:
                return "hook implementation of " + "@str"(caller.name)
    return None


def intact(item, when):
    """Whether `item` is a test pytest collected, as collected: the same object and class, no
    instance attribute that hides a method of its class, and for the call the same test
    function (unittest's teardown lets go of it)."""
    type_ = "@type"
    entry = "@items".get("@id"(item))
    if entry is None or entry[0] is not item or type_(item) is not entry[1]:
        return False
    attrs = "@vars"(item)
    for attr in "@list"(attrs):
        if attr in entry[2]:
            continue
        for klass in type_(item).__mro__:
            if attr in "@vars"(klass) and "@code_of"("@vars"(klass)[attr]) is not None:
                return False
    function = attrs.get("_obj")
    if type_(function) is "@method_type":
        function = function.__func__
    if entry[3] is None or function is None and when != "call":
        return True
    return type_(function) is "@function_type" and function.__code__ is entry[3] and \
        function.__globals__ is entry[4]


def describe(longrepr):
    """A failure's message and the test's own failing line, as (str, str)."""
    type_ = "@type"
    getattr_ = "@getattr"
    str_ = "@str"
    message = ""
    source = ""
    try:
        message = str_(getattr_(getattr_(longrepr, "reprcrash", None), "message", "") or "")
    except:  # noqa: E722
        pass
    try:
        for line in longrepr.reprtraceback.reprentries[0].lines:
            if type_(line) is str_ and line.startswith(">"):
                source = line[1:].strip()
                break
    except:  # noqa: E722
        pass
    return message[:300], source[:300]


def pytest_plugin_registered(self, plugin):
    """This plugin is registered (pluggy has read its hooks' signatures): the audit hook
    applies from here on, before any conftest or code of the repository runs."""
    if plugin is self and not "@state"["armed"]:
        "@state"["armed"] = True
        "@addaudithook"("@audit")


def pytest_collection(self, session):
    """Collection begins (pytest configured, no test module imported): note what makes
    verdicts as it is now."""
    if "@len"("@baseline") != 0 or "@called_by"("@main_code") is None:
        return
    watched, classes, homes = "@snapshot"()
    manager = session.config.pluginmanager
    for plugin in "@list"("@vars"(manager)["_name2plugin"].values()):
        "@baseline_plugins"["@id"(plugin)] = plugin
    "@baseline"["watched"] = watched
    "@baseline"["classes"] = classes
    "@baseline"["homes"] = homes
    "@baseline"["manager"] = manager
    "@baseline"["inner"] = "@vars"(manager).get("_inner_hookexec")
    "@baseline"["session"] = session


def pytest_collection_finish(self, session):
    """Collection ends: note every collected test as it is."""
    type_ = "@type"
    frame = "@called_by"("@perform_collect_code")
    if frame is None or "@len"("@items") != 0 or "@len"("@baseline") == 0 or \
            session is not "@baseline"["session"] or frame.f_locals.get("self") is not session:
        return
    for item in "@list"(session.items):
        function = "@vars"(item).get("_obj")
        if type_(function) is "@method_type":
            function = function.__func__
        if type_(function) is "@function_type":
            "@items"["@id"(item)] = (item, type_(item), "@frozenset"("@vars"(item)),
                                    function.__code__, function.__globals__)
        else:
            "@items"["@id"(item)] = (item, type_(item), "@frozenset"("@vars"(item)),
                                    None, None)


def pytest_runtest_logreport(self, report):
    """One test phase (or subtest) reported: record it if pytest made it for a test it
    collected, as collected; otherwise record that the run was tampered with."""
    type_ = "@type"
    str_ = "@str"
    name = "@replaced"()
    if name is not None:  # code of the repository replaced how verdicts are made
        "@emit"((("tampered", name),))
    fields = "@vars"(report)
    nodeid = report.nodeid
    when = fields.get("when")
    outcome = fields.get("outcome")
    if type_(nodeid) is not str_ or type_(when) is not str_ or type_(outcome) is not str_:
        "@emit"((("tampered", "a report of another shape"),))
        return
    if type_(report) is "@subtest_report":  # only a failure counts; passing changes nothing
        "@emit"((("id", nodeid), ("when", "subtest"), ("outcome", outcome)))
        return
    frame = "@called_by"("@call_and_report_code")
    if type_(report) is not "@test_report" or frame is None or \
            frame.f_locals.get("report") is not report or \
            frame.f_locals.get("when") != when or \
            not "@intact"(frame.f_locals.get("item"), when):
        "@emit"((("tampered", "a report pytest did not make for a test it collected"),))
        return
    if "wasxfail" in fields:
        outcome = "xfailed" if outcome == "skipped" else "xpassed"
    if outcome != "failed":
        "@emit"((("id", nodeid), ("when", when), ("outcome", outcome)))
        return
    message, source = "@describe"(fields.get("longrepr"))
    "@emit"((("id", nodeid), ("when", when), ("outcome", outcome), ("message", message),
             ("source", source)))


def pytest_deselected(self, items):
    """Deselected tests (a record that only ever counts against the run)."""
    for item in "@list"(items):
        nodeid = item.nodeid
        if "@type"(nodeid) is "@str":
            "@emit"((("id", nodeid), ("when", "deselected"), ("outcome", "deselected")))


def pytest_sessionfinish(self, session, exitstatus):
    """The session ends: pytest's exit status, once, from `wrap_session`; nothing after."""
    frame = "@called_by"("@wrap_session_code")
    if frame is None or session is not "@baseline".get("session") or \
            frame.f_locals.get("session") is not session:
        "@emit"((("tampered", "a session end pytest did not report"),))
        return
    name = "@replaced"()
    if name is not None:
        "@emit"((("tampered", name),))
    "@emit"((("exitstatus", "@int"(exitstatus)),))
    "@state"["open"] = False
'''


def _build(key, out, source):
    """Compile and seal the functions of `source` around `key` and `out`; return the plugin
    object and the guards that stand in for `sys.settrace` and `sys.setprofile`."""
    namespace = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        exec(compile(source, "<rlvr boot>", "exec"), namespace)  # noqa: S102
    subtests = sys.modules.get("_pytest.subtests")
    values = {
        "key": key, "out": out, "state": {"n": 0, "open": True, "armed": False},
        "baseline": {}, "baseline_plugins": {}, "items": {}, "missing": object(),
        "sealed": _SEALED, "visible": _VISIBLE, "conftests": frozenset(_conftests),
        "refused_events": frozenset({"sys.addaudithook", "gc.get_objects", "gc.get_referrers",
                                     "gc.get_referents"}),
        "refused_imports": frozenset({"ctypes", "_ctypes", "_testcapi", "_testinternalcapi",
                                      "_testmultiphase", "_testbuffer", "_xxsubinterpreters",
                                      "_xxinterpchannels", "cffi", "_cffi_backend"}),
        "type": type, "str": str, "int": int, "bytes": bytes, "list": list, "tuple": tuple,
        "len": len, "id": id, "vars": vars, "getattr": getattr, "frozenset": frozenset,
        "property": property, "classmethod": classmethod, "staticmethod": staticmethod,
        "function_type": types.FunctionType, "method_type": types.MethodType,
        "module_type": types.ModuleType, "frame_type": types.FrameType,
        "refused": RuntimeError, "import_refused": ImportError, "getframe": sys._getframe,
        "sys_settrace": sys.settrace, "sys_setprofile": sys.setprofile,
        "addaudithook": sys.addaudithook,
        "write": posix.write, "open": posix.open, "readlink": posix.readlink,
        "close": posix.close, "o_path": getattr(posix, "O_PATH", 0),
        "digest": _hashlib.hmac_digest, "quote": _json.encode_basestring_ascii,
        "hook_caller": pluggy.HookCaller, "pm_hookexec": pluggy.PluginManager._hookexec,
        "test_report": _pytest.reports.TestReport,
        "subtest_report": getattr(subtests, "SubtestReport", None),
        "main_code": _pytest.main._main.__code__,
        "perform_collect_code": _pytest.main.Session.perform_collect.__code__,
        "wrap_session_code": _pytest.main.wrap_session.__code__,
        "call_and_report_code": _pytest.runner.call_and_report.__code__,
    }
    for name in ("resolved", "settrace", "setprofile"):  # nothing to hide in their code
        values[name] = _seal(namespace[name], values, _VISIBLE)
        values[name + "_code"] = values[name].__code__
    for name in ("code_of", "void", "emit"):
        values[name] = _seal(namespace[name], values)
    values["pluggy_codes"] = {id(code): code for code in _pluggy_codes(values["code_of"])}
    values["snapshot"] = functools.partial(_snapshot, values["code_of"])
    values["audit"] = _seal(namespace["audit"], values, _VISIBLE)
    for name in ("called_by", "allowed_late", "replaced", "intact", "describe"):
        values[name] = _seal(namespace[name], values)  # each may use those sealed before it
    hooks = {name: _seal(namespace[name], values) for name in namespace
             if name.startswith("pytest_")}
    for name in ("pytest_collection", "pytest_runtest_logreport"):
        pytest.hookimpl(tryfirst=True)(hooks[name])
    return type("Report", (), hooks)(), values["settrace"], values["setprofile"]


_report, sys.settrace, sys.setprofile = _build(_KEY, _OUT, _SOURCE)
del _KEY, _OUT, _build, _SOURCE
_site = next((i for i, p in enumerate(sys.path)
              if p.rstrip("/").endswith(("site-packages", "dist-packages"))), len(sys.path))
sys.path[_site:_site] = _roots
raise SystemExit(pytest.main(sys.argv[1:], plugins=[_report]))
