"""Deterministic rule checks beside the judge (ours, not the paper's).

A rule reads a constraint's text; when the text has the shape the rule knows
(``Rule.applies``, a regular expression plus parameters pulled from the text),
the rule decides the constraint on the answer's code, by its AST or by calling
the answer's function in the sandbox on generic inputs (empty list/string,
``None``, ``-1``, a string where a number is wanted).  A rule may still stay
undecided (``None``) on one answer: the code does not parse, the function it
needs cannot be identified, or the evidence is one-sided (tests are present,
but the constraint also asks what they should cover).  Where a rule decides,
its verdict is reported beside the judge's; the judge's verdict stays the
item's verdict (the paper's protocol), and ``hybrid_csr`` lets rule verdicts
override the judge's.

Each rule's ``applies`` docstring line says when it is selected; the first rule
in :data:`RULES` that matches is the one used.  Coverage and precision on the
released data: docs/cife.md.
"""
from __future__ import annotations

import ast
import io
import re
import sys
import tokenize
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

# Bump when any rule's selection or verdict can change: it enters the adapter's version,
# hence the result key, so cached items never carry verdicts of older rules.
VERSION = 2

# Runs one function of the code in the sandbox: (code, function name, list of
# positional-argument tuples) -> one outcome per call, each
# ("ok", value) | ("raise", exception type name) | ("timeout", None);
# or a string saying why nothing ran (the code does not load).
Runner = Callable[[str, str, Sequence[tuple]], "list[tuple[str, Any]] | str"]

_NEG = r"(?:do\s+not|don't|does\s+not|must\s+not|should\s+not|shall\s+not|cannot|can't|never|without|avoid(?:ing)?|not\s+allowed\s+to|refrain\s+from|no)"
_USE = r"(?:use|using|uses|utiliz(?:e|es|ing)|utilis(?:e|es|ing)|employ(?:s|ing)?|leverag(?:e|es|ing)|rely\s+on|relying\s+on|import(?:ing)?|call(?:ing)?)"


def _quiet_parse(text: str) -> ast.Module:
    """``ast.parse`` without the SyntaxWarnings/DeprecationWarnings of the parsed text (answers' own problems)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(text)


@dataclass(frozen=True)
class Verdict:
    rule: str
    verdict: bool | None
    reason: str


@dataclass
class Code:
    """The answer's code, parsed once."""

    text: str
    tree: ast.Module | None
    error: str = ""

    @classmethod
    def parse(cls, text: str) -> "Code":
        try:
            return cls(text, _quiet_parse(text))
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            return cls(text, None, f"the code does not parse ({type(exc).__name__})")

    def nodes(self) -> Iterable[ast.AST]:
        return ast.walk(self.tree) if self.tree else ()

    def imports(self) -> set[str]:
        """Every imported module's dotted name and each of its prefixes."""
        found: set[str] = set()
        for node in self.nodes():
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module]
            for name in names:
                parts = name.split(".")
                found.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
        return found

    def called_names(self) -> set[str]:
        """Names called as ``f(...)`` or ``x.f(...)`` (the last component)."""
        out = set()
        for node in self.nodes():
            if isinstance(node, ast.Call):
                f = node.func
                if isinstance(f, ast.Name):
                    out.add(f.id)
                elif isinstance(f, ast.Attribute):
                    out.add(f.attr)
        return out

    def attribute_roots(self) -> set[str]:
        """``pd`` of ``pd.read_csv``: names used as the root of an attribute."""
        out = set()
        for node in self.nodes():
            if isinstance(node, ast.Attribute):
                v = node.value
                while isinstance(v, ast.Attribute):
                    v = v.value
                if isinstance(v, ast.Name):
                    out.add(v.id)
        return out

    def defs(self) -> list[ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef]:
        return [n for n in self.nodes() if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]

    def has(self, *types: type) -> bool:
        return any(isinstance(n, types) for n in self.nodes())

    def comments(self) -> int:
        # A comment token starts with "#": without one there is nothing to count, and no need
        # for tokenize (pure Python: 0.4-0.8 CPU s over the 100-200 KB of a hostile answer).
        if "#" not in self.text:
            return 0
        try:
            return sum(1 for t in tokenize.generate_tokens(io.StringIO(self.text).readline) if t.type == tokenize.COMMENT)
        except (tokenize.TokenError, SyntaxError, IndentationError):
            return 0


class Rule:
    name = ""
    applies = ""  # one line: when the rule is selected
    pattern: re.Pattern[str]
    dynamic = False  # needs the sandbox

    def match(self, text: str, instruction: str = "") -> dict[str, Any] | None:
        m = self.pattern.search(text)
        return self.params(m, text) if m else None

    def params(self, m: re.Match[str], text: str) -> dict[str, Any] | None:
        return {}

    def decide(self, params: dict[str, Any], code: Code, run: Runner | None) -> tuple[bool | None, str]:
        raise NotImplementedError


# --- library usage -----------------------------------------------------------------------------

# words in constraint texts -> module roots that provide them (and their usual aliases)
LIBRARIES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "pytorch lightning": (("pytorch_lightning", "lightning"), ()), "flask-socketio": (("flask_socketio",), ()),
    "elementtree": (("xml.etree",), ("ET",)), "pdb": (("pdb",), ()), "python debugger": (("pdb",), ()), "pandas": (("pandas",), ("pd",)), "numpy": (("numpy",), ("np",)), "np": (("numpy",), ("np",)),
    "matplotlib": (("matplotlib",), ("plt", "mpl")), "pyplot": (("matplotlib",), ("plt",)),
    "seaborn": (("seaborn",), ("sns",)), "scipy": (("scipy",), ()), "sklearn": (("sklearn",), ()),
    "scikit-learn": (("sklearn",), ()), "torch": (("torch",), ()), "pytorch": (("torch",), ()),
    "tensorflow": (("tensorflow",), ("tf",)), "keras": (("keras", "tensorflow"), ()),
    "requests": (("requests",), ()), "beautifulsoup": (("bs4",), ()), "bs4": (("bs4",), ()),
    "flask": (("flask",), ()), "django": (("django",), ()), "sqlite3": (("sqlite3",), ()),
    "sqlalchemy": (("sqlalchemy",), ()), "regex": (("re", "regex"), ()), "regular expressions?": (("re", "regex"), ()),
    "re": (("re", "regex"), ()), "json": (("json",), ()), "csv": (("csv",), ()), "datetime": (("datetime",), ()),
    "collections": (("collections",), ()), "itertools": (("itertools",), ()), "functools": (("functools",), ()),
    "random": (("random", "numpy"), ()), "math": (("math",), ()), "logging": (("logging",), ()),
    "argparse": (("argparse",), ()), "unittest": (("unittest",), ()), "pytest": (("pytest",), ()),
    "threading": (("threading",), ()), "multiprocessing": (("multiprocessing",), ()),
    "asyncio": (("asyncio",), ()), "socket": (("socket",), ()), "tkinter": (("tkinter",), ("tk",)),
    "pygame": (("pygame",), ()), "openpyxl": (("openpyxl",), ()), "pil": (("PIL",), ()), "pillow": (("PIL",), ()),
    "opencv": (("cv2",), ()), "cv2": (("cv2",), ()), "nltk": (("nltk",), ()), "statsmodels": (("statsmodels",), ()),
    "plotly": (("plotly",), ()), "dask": (("dask",), ()), "networkx": (("networkx",), ("nx",)),
    "hashlib": (("hashlib",), ()), "secrets": (("secrets",), ()), "subprocess": (("subprocess",), ()),
    "shutil": (("shutil",), ()), "pathlib": (("pathlib",), ()), "pickle": (("pickle",), ()),
    "heapq": (("heapq",), ()), "bisect": (("bisect",), ()), "decimal": (("decimal",), ()),
    "statistics": (("statistics",), ()), "dataclasses?": (("dataclasses",), ()), "typing": (("typing",), ()),
    "uuid": (("uuid",), ()), "zipfile": (("zipfile",), ()), "smtplib": (("smtplib",), ()),
    "urllib": (("urllib",), ()), "yaml": (("yaml",), ()), "pyyaml": (("yaml",), ()), "boto3": (("boto3",), ()),
    "selenium": (("selenium",), ()), "scrapy": (("scrapy",), ()), "fastapi": (("fastapi",), ()),
    "pydantic": (("pydantic",), ()), "transformers": (("transformers",), ()), "tqdm": (("tqdm",), ()),
    "sympy": (("sympy",), ()), "pymongo": (("pymongo",), ()), "psycopg2": (("psycopg2",), ()),
    "redis": (("redis",), ()), "bcrypt": (("bcrypt",), ()), "cryptography": (("cryptography",), ()),
    "wordcloud": (("wordcloud",), ()), "geopandas": (("geopandas",), ("gpd",)), "xarray": (("xarray",), ("xr",)),
    "textblob": (("textblob",), ()), "gensim": (("gensim",), ()), "spacy": (("spacy",), ()),
    "lxml": (("lxml",), ()), "pyqt5": (("PyQt5",), ()), "wxpython": (("wx",), ()), "kivy": (("kivy",), ()),
    "turtle": (("turtle",), ()), "os": (("os",), ()), "sys": (("sys",), ()), "time": (("time", "datetime"), ()),
    "concurrent.futures": (("concurrent.futures",), ()), "struct": (("struct",), ()), "base64": (("base64",), ()),
    "jwt": (("jwt",), ()), "pyjwt": (("jwt",), ()), "hmac": (("hmac",), ()), "zlib": (("zlib",), ()),
    "gzip": (("gzip",), ()), "xml": (("xml", "lxml"), ()), "email": (("email",), ()), "smtp": (("smtplib",), ()),
}
_LIB_WORDS = sorted(LIBRARIES, key=len, reverse=True)
_LIB_RE = r"(?P<lib>" + "|".join(w.replace(".", r"\.") for w in _LIB_WORDS) + r")"
# words that make "re", "os", "time" ... ambiguous as plain English unless marked as a module
_AMBIGUOUS = {"re", "os", "sys", "time", "random", "math", "json", "csv", "email", "xml", "typing", "statistics",
              "decimal", "struct", "secrets", "requests", "collections", "logging", "regex", "regular expressions?",
              "pickle", "turtle", "np", "socket", "smtp", "uuid"}


def _lib_key(word: str) -> str:
    low = word.lower()
    for key in _LIB_WORDS:
        if re.fullmatch(key, low):
            return key
    return low


def _lib_used(code: Code, key: str) -> bool:
    modules, aliases = LIBRARIES[key]
    imported = code.imports()
    if any(m in imported for m in modules):
        return True
    roots = code.attribute_roots()
    return any(m.split(".")[0] in roots for m in modules) or any(a in roots for a in aliases)


class UsesLibrary(Rule):
    name = "uses_library"
    applies = ("'use/utilize/employ/leverage LIB' (LIB a known library, e.g. pandas, numpy, re, logging), "
               "not negated: the library must be imported or its usual alias used")
    pattern = re.compile(r"\b" + _USE + r"\s+(?:of\s+)?(?:the\s+|a\s+|python'?s\s+|built-in\s+)?`?" + _LIB_RE
                         + r"`?(?:'s)?(?P<after>\s+(?:library|module|package|framework))?\b", re.I)

    def params(self, m, text):
        before = text[:m.start()]
        if re.search(_NEG + r"[^.;]{0,40}$", before, re.I):
            return None
        key = _lib_key(m.group("lib"))
        if key in _AMBIGUOUS and not (m.group("after") or "`" in m.group(0) or key in {"regex", "regular expressions?", "logging", "json", "csv", "collections", "requests"}):
            return None
        rest = text[m.end():].strip(" .")
        # "Use pandas." / "Use pandas for data manipulation." -> the library is the whole demand
        generic = (not rest or re.fullmatch(r"(?:library|module|package)?\s*(?:for|to)\s+[\w\s,-]{0,40}", rest, re.I) is not None) \
            and m.start() < 20
        return {"library": key, "generic": generic}

    def decide(self, p, code, run):
        if code.tree is None:
            return None, code.error
        if _lib_used(code, p["library"]):
            if p["generic"]:
                return True, f"{p['library']} is imported/used"
            return None, f"{p['library']} is used; whether as the constraint asks is not decidable by rule"
        if p["library"] in {"regex", "regular expressions?"}:
            # regular expressions also live in strings handed to Django's re_path, pandas' str.contains, ...
            return None, "re is not imported; a regular expression may still be used through another API"
        return False, f"{p['library']} is neither imported nor used"


# --- forbidden things --------------------------------------------------------------------------

_BUILTINS = {"sorted", "sort", "reversed", "reverse", "len", "max", "min", "sum", "set", "eval", "exec", "map",
             "filter", "zip", "enumerate", "print", "input", "join", "split", "count", "index", "pow", "abs",
             "round", "any", "all", "range", "isinstance", "replace", "find", "strip", "upper", "lower",
             "append", "extend", "pop", "insert", "remove", "bin", "int", "str", "list", "dict", "tuple",
             "global", "lambda", "recursion", "ord", "chr", "math.sqrt", "sqrt", "split", "deepcopy", "copy"}


class ForbiddenCall(Rule):
    name = "forbidden_call"
    applies = ("'do not use / without using / avoid THING' where THING is a known library, a built-in "
               "(sorted, len, max, eval, ...) or a `backticked`/name() function: it must not be imported or called")
    pattern = re.compile(_NEG + r"\s+(?:the\s+)?" + _USE + r"\s+(?:the\s+|any\s+|python'?s\s+|built-in\s+|a\s+)*"
                         r"(?P<what>`[\w.]+(?:\(\))?`|[\w.]+\(\)|[\w.-]+)"
                         r"(?P<kind>\s+(?:function|method|module|library|package|built-in|keyword|statement|operator))?", re.I)

    def params(self, m, text):
        what = m.group("what").strip("`").removesuffix("()")
        low = what.lower()
        rest = text[m.end():]
        if re.match(r"\s*(?:\w+\s+){0,2}?(?:to|for|in\s+order|when|on|with|that|which)\b", rest, re.I) and not re.match(r"\s*(?:or|and|,)", rest):
            return None
        if low in {"global"}:
            return {"what": "global", "kind": "global"}
        if _lib_key(low) in LIBRARIES and (m.group("kind") or "`" in m.group("what") or _lib_key(low) not in _AMBIGUOUS):
            return {"what": _lib_key(low), "kind": "library"}
        marked = "`" in m.group("what") or m.group("what").endswith("()")
        if low in _BUILTINS or marked:
            if low in {"recursion", "lambda", "loops"}:
                return None
            return {"what": what.split(".")[-1], "kind": "call"}
        return None

    def decide(self, p, code, run):
        if code.tree is None:
            return None, code.error
        if p["kind"] == "library":
            used = _lib_used(code, p["what"])
            return (not used), f"{p['what']} is {'used' if used else 'not used'}"
        if p["kind"] == "global":
            used = code.has(ast.Global)
            return (not used), f"a global statement is {'present' if used else 'absent'}"
        name = p["what"]
        used = name in code.called_names() or any(
            isinstance(n, ast.alias) and n.name.split(".")[-1] == name for n in code.nodes())
        return (not used), f"{name} is {'called' if used else 'not called'}"


_OPS = {"arithmetic": (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow),
        "mathematical": (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow),
        "addition": (ast.Add,), "subtraction": (ast.Sub,), "multiplication": (ast.Mult,),
        "division": (ast.Div, ast.FloorDiv), "modulo": (ast.Mod,), "modulus": (ast.Mod,), "exponent": (ast.Pow,),
        "exponentiation": (ast.Pow,)}


class ForbiddenOperator(Rule):
    name = "forbidden_operator"
    applies = "'not allowed to use / without / do not use (any) arithmetic|multiplication|modulo|... operator(s)'"
    pattern = re.compile(_NEG + r"\s+(?:the\s+)?(?:use|using)?\s*(?:of\s+)?(?:any\s+|the\s+)?(?P<op>arithmetic|mathematical|addition|subtraction|"
                         r"multiplication|division|modulo|modulus|exponent|exponentiation)\s+operators?", re.I)

    def params(self, m, text):
        return {"op": m.group("op").lower()}

    def decide(self, p, code, run):
        if code.tree is None:
            return None, code.error
        ops = _OPS[p["op"]]
        for n in code.nodes():
            if isinstance(n, (ast.BinOp, ast.AugAssign)) and isinstance(n.op, ops):
                return False, f"line {n.lineno} uses {type(n.op).__name__}"
        return True, f"no {p['op']} operator"


# --- structure ---------------------------------------------------------------------------------

_KINDS = r"(?:function|method|class|test\s+case|test\s+class|subclass|decorator|helper\s+function|coroutine|exception(?:\s+class)?)"


class NameDefined(Rule):
    name = "name_defined"
    applies = "'a function/method/class named|called `X`' or 'define/implement/create a function|class `X`': X must be defined"
    pattern = re.compile(r"\b" + _KINDS + r"\s+(?:should\s+be\s+|must\s+be\s+|is\s+|be\s+)?(?:named|called)\s+[`'\"]?(?P<name>[A-Za-z_]\w*)"
                         r"|\b(?:define|implement|create|write|provide)\s+(?:a|an|the)\s+" + _KINDS
                         + r"\s+`(?P<name2>[A-Za-z_]\w*)(?:\([^`]*)?`"
                         r"|\b(?:define|implement|create|write|provide)\s+(?:a|an)\s+`(?P<name3>[A-Za-z_]\w*)`\s+(?:class|function|method)\b"
                         r"|\b(?:define|implement|create|write|provide)\s+(?:the\s+)?(?P<list>`[A-Za-z_]\w*`(?:\s*(?:,|and|,\s*and)\s*`[A-Za-z_]\w*`)+)"
                         r"\s+(?:class(?:es)?|functions|methods)\b", re.I)

    def params(self, m, text):
        names = re.findall(r"`([A-Za-z_]\w*)", m.group("list")) if m.group("list") else [m.group("name") or m.group("name2") or m.group("name3")]
        return {"names": names, "more": _asks_more(text[m.end():])}

    def decide(self, p, code, run):
        if code.tree is None:
            return None, code.error
        have = {d.name for d in code.defs()}
        missing = [n for n in p["names"] if n not in have]
        if missing:
            return False, f"not defined: {', '.join(missing)}"
        if p["more"]:
            return None, f"defined: {', '.join(p['names'])}; the rest of the constraint is for the judge"
        return True, f"defined: {', '.join(p['names'])}"


def _asks_more(rest: str) -> bool:
    """Whether the text after a name demands more than the name (``that takes ...``, ``with a factor of 1.5``)."""
    return bool(re.match(r"\s*(?:\w+\s+){0,3}?(?:that|which|with|to|for|taking|takes|accepting|accepts|returning|returns|"
                         r"should|must|using|by|in\s+order)\b", rest, re.I))


class Inherits(Rule):
    name = "inherits"
    applies = "'(the class) should inherit from / subclass / derive from `X`': some class must have base X"
    pattern = re.compile(r"\b(?:inherit(?:s|ing)?\s+from|extends?|extending|derived?\s+from|(?:be\s+a\s+)?subclass(?:es)?\s+of|subclass(?:es)?)\s+"
                         r"(?:the\s+)?(?:built-in\s+)?(?:[\w-]+'s\s+)?`?(?P<base>[A-Za-z_][\w.]*)`?", re.I)

    def params(self, m, text):
        if re.search(r"\bnot\s+$", text[:m.start()], re.I):
            return None
        base = m.group("base").rstrip(".").split(".")[-1]
        return {"base": base} if base[:1].isupper() or "`" in m.group(0) else None

    def decide(self, p, code, run):
        if code.tree is None:
            return None, code.error
        for d in code.defs():
            if isinstance(d, ast.ClassDef):
                for b in d.bases:
                    name = b.attr if isinstance(b, ast.Attribute) else getattr(b, "id", "")
                    if name == p["base"]:
                        return True, f"class {d.name} inherits from {p['base']}"
        return False, f"no class inherits from {p['base']}"


def _self_calling(code: Code) -> list[str]:
    out = []
    for d in code.defs():
        if isinstance(d, ast.ClassDef):
            continue
        for n in ast.walk(d):
            if isinstance(n, ast.Call):
                f = n.func
                if (isinstance(f, ast.Name) and f.id == d.name) or (isinstance(f, ast.Attribute) and f.attr == d.name):
                    out.append(d.name)
                    break
    return out


class Recursion(Rule):
    name = "recursion"
    applies = ("'use recursion / a recursive function|approach' (a function must call itself) or "
               "'without recursion / non-recursive / iterative instead' (none may)")
    pattern = re.compile(r"(?P<neg>\bwithout\s+(?:using\s+)?recursion|\bnon-?recursive|\b(?:not|never)\s+(?:use\s+)?recursion"
                         r"|\bavoid(?:ing)?\s+recursion|\bno\s+recursion|\biterative(?:ly)?\b[^.]{0,30}\b(?:instead|rather)\b)"
                         r"|(?P<pos>\b(?:use|using|implement\w*|employ|utiliz\w+|should\s+be|must\s+be|be)\s+(?:a\s+)?recursi(?:on|ve)\b"
                         r"|\b(?:use|using|implement\w*|employ|utiliz\w+|be|as|with)\s+(?:a\s+)?recursive\s+(?:function|approach|solution|algorithm|implementation|calls?|helper|method))", re.I)

    def params(self, m, text):
        if "depth" in text.lower() or "recursion limit" in text.lower():
            return None
        return {"required": m.group("pos") is not None}

    def decide(self, p, code, run):
        if code.tree is None:
            return None, code.error
        rec = _self_calling(code)
        if p["required"]:
            return (bool(rec), f"recursive: {', '.join(rec)}" if rec else "no function calls itself")
        return (not rec, f"recursive: {', '.join(rec)}" if rec else "no function calls itself")


class Loops(Rule):
    name = "loops"
    applies = "'without (using) loops / do not use for|while loops' (no for/while statement) or 'use a (single) for|while loop'"
    pattern = re.compile(r"(?P<neg>" + _NEG + r"\s+(?:the\s+)?(?:use\s+|using\s+)?(?:of\s+)?(?:any\s+|explicit\s+)*(?P<nk>for\s+|while\s+)?(?:loops?|looping\s+constructs?)\b)"
                         r"|(?P<pos>\b(?:use|using)\s+(?:a|an|one|exactly\s+one)\s+(?P<single>single\s+)?(?P<pk>for\s+|while\s+)?loop\b)", re.I)

    def params(self, m, text):
        if m.group("neg"):
            more = bool(re.match(r"\s*(?:or|and|,|nor)\b", text[m.end():], re.I)) or "control structure" in text.lower() or "recursion" in text.lower()
            return {"required": False, "kind": (m.group("nk") or "").strip().lower(), "more": more}
        return {"required": True, "kind": (m.group("pk") or "").strip().lower(), "single": bool(m.group("single"))}

    def decide(self, p, code, run):
        if code.tree is None:
            return None, code.error
        kinds = {"for": (ast.For, ast.AsyncFor), "while": (ast.While,), "": (ast.For, ast.AsyncFor, ast.While)}[p["kind"]]
        loops = [n for n in code.nodes() if isinstance(n, kinds)]
        comps = code.has(ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
        if p["required"]:
            if p.get("single"):
                return (len(loops) == 1 and not comps), f"{len(loops)} loop statement(s)"
            return bool(loops), f"{len(loops)} loop statement(s)"
        if loops:
            return False, f"line {loops[0].lineno} has a loop"
        if p.get("more"):
            return None, "no loop statement; the constraint forbids more than loops"
        if comps and not p["kind"]:
            return None, "no loop statement, but comprehensions (loops or not is for the judge)"
        return True, "no loop statement"


_CONSTRUCTS = {
    "list comprehension": ((ast.ListComp,), "a list comprehension"),
    "list comprehensions": ((ast.ListComp,), "a list comprehension"),
    "dictionary comprehension": ((ast.DictComp,), "a dict comprehension"),
    "dict comprehension": ((ast.DictComp,), "a dict comprehension"),
    "set comprehension": ((ast.SetComp,), "a set comprehension"),
    "generator expression": ((ast.GeneratorExp,), "a generator expression"),
    "generator": ((ast.Yield, ast.YieldFrom, ast.GeneratorExp), "yield or a generator expression"),
    "lambda": ((ast.Lambda,), "a lambda"),
    "f-string": ((ast.JoinedStr,), "an f-string"),
    "f-strings": ((ast.JoinedStr,), "an f-string"),
    "context manager": ((ast.With, ast.AsyncWith), "a with statement"),
    "with statement": ((ast.With, ast.AsyncWith), "a with statement"),
    "try-except": ((ast.Try,), "a try statement"),
    "try/except": ((ast.Try,), "a try statement"),
    "try-except block": ((ast.Try,), "a try statement"),
    "try-except blocks": ((ast.Try,), "a try statement"),
    "try/except blocks": ((ast.Try,), "a try statement"),
    "try-catch": ((ast.Try,), "a try statement"),
    "class": ((ast.ClassDef,), "a class"),
    "classes": ((ast.ClassDef,), "a class"),
    "object-oriented": ((ast.ClassDef,), "a class"),
    "decorator": (("decorator",), "a decorator"),
    "async": ((ast.AsyncFunctionDef, ast.Await), "async code"),
    "asynchronous": ((ast.AsyncFunctionDef, ast.Await), "async code"),
    "set": ((ast.Set, ast.SetComp, "set"), "a set"),
    "dictionary": ((ast.Dict, ast.DictComp, "dict", "defaultdict", "Counter", "OrderedDict"), "a dict"),
    "hash map": ((ast.Dict, ast.DictComp, "dict", "defaultdict", "Counter", "OrderedDict"), "a dict"),
    "hashmap": ((ast.Dict, ast.DictComp, "dict", "defaultdict", "Counter", "OrderedDict"), "a dict"),
    "main guard": (("main",), "an if __name__ == '__main__' block"),
}
_CONSTRUCT_RE = "|".join(re.escape(k) for k in sorted(_CONSTRUCTS, key=len, reverse=True))


class UsesConstruct(Rule):
    name = "uses_construct"
    applies = ("'use/utilize/implement with/in a CONSTRUCT' for list/dict/set comprehensions, generators, lambdas, "
               "f-strings, with, try-except, a class / object-oriented, decorators, async, a set, a dict, the main guard: "
               "the construct must occur")
    pattern = re.compile(r"\b(?:" + _USE + r"|implement(?:ed)?\s+(?:\w+\s+){0,4}?(?:as|in|using|with)|encapsulat\w+\s+(?:\w+\s+){0,4}?(?:in|within|into)"
                         r"|organiz\w+\s+(?:\w+\s+){0,4}?(?:in|into|as)|include|with)\s+(?:a\s+|an\s+|the\s+|python'?s\s+)?"
                         r"(?P<c>" + _CONSTRUCT_RE + r")(?:\s+(?:statement|block|manager|data\s+structure|approach|programming|structure))?\b", re.I)

    def params(self, m, text):
        before = text[:m.start()]
        if re.search(_NEG + r"[^.;]{0,30}$", before, re.I):
            return None
        c = m.group("c").lower()
        if c in {"set", "dictionary", "class", "classes", "generator", "async"}:
            rest = text[m.end():m.end() + 25].lower()
            if c == "set" and not re.match(r"\s*(?:data\s+structure|to\s+|for\s+|\(|\.|,|$)", rest):
                return None
        return {"construct": c}

    def decide(self, p, code, run):
        if code.tree is None:
            return None, code.error
        wanted, what = _CONSTRUCTS[p["construct"]]
        types = tuple(t for t in wanted if isinstance(t, type))
        names = {t for t in wanted if isinstance(t, str)}
        found = bool(types) and code.has(*types)
        if not found and "decorator" in names:
            found = any(getattr(d, "decorator_list", None) for d in code.defs())
        if not found and "main" in names:
            found = "__main__" in code.text and code.has(ast.If)
        if not found and names - {"decorator", "main"}:
            found = bool((names - {"decorator", "main"}) & code.called_names())
        return found, f"{what} is {'present' if found else 'absent'}"


class FunctionWrapped(Rule):
    name = "function_defined"
    applies = "'encapsulate/implement/wrap the logic in|as|into a (reusable, separate) function': some function must be defined"
    pattern = re.compile(r"\b(?:encapsulat\w*|implement\w*|wrap\w*|organiz\w*|structur\w*|put|place)\s+(?:\w+\s+){0,5}?"
                         r"(?:in|as|into|within|inside)\s+(?:a|an|one)\s+(?:single\s+|separate\s+|reusable\s+|dedicated\s+|standalone\s+|python\s+)*"
                         r"(?P<kind>function|method)\b", re.I)

    def decide(self, p, code, run):
        if code.tree is None:
            return None, code.error
        found = code.has(ast.FunctionDef, ast.AsyncFunctionDef)
        return found, f"a function is {'defined' if found else 'not defined'}"


def _base_name(node: ast.AST) -> str:
    """``TestCase`` of ``unittest.TestCase`` (no ``ast.unparse``: a hostile base could nest deep enough to recurse)."""
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _tests(code: Code) -> str:
    for d in code.defs():
        if isinstance(d, ast.ClassDef) and any(_base_name(b) == "TestCase" for b in d.bases):
            return f"unittest class {d.name}"
        if not isinstance(d, ast.ClassDef) and d.name.startswith("test"):
            return f"test function {d.name}"
    imports = code.imports()
    if "unittest" in imports or "pytest" in imports or "doctest" in imports:
        return "a test framework is imported"
    if code.has(ast.Assert):
        return "assert statements"
    if ">>> " in code.text:
        return "doctest examples"
    if re.search(r"^#.*\btest", code.text, re.I | re.M) and any(
            isinstance(n, ast.Expr) and isinstance(n.value, ast.Call) for n in code.tree.body):
        return "a '# test' section with calls"
    return ""


class TestsPresent(Rule):
    name = "tests_present"
    applies = ("'include/write/create/provide/add (unit) tests / test cases' (not negated): tests must be present "
               "(decides pass only when the constraint says nothing about what they cover)")
    pattern = re.compile(r"\b(?:include|includes|including|write|create|provide|add|implement|develop|accompan\w+\s+by)\s+"
                         r"(?:a\s+|an\s+|some\s+|several\s+|comprehensive\s+|basic\s+|simple\s+|appropriate\s+|the\s+|at\s+least\s+\w+\s+)*"
                         r"(?:unit\s+|pytest\s+|unittest\s+|test\s+)?(?:tests?|test\s+cases?|test\s+suite|test\s+functions?)\b", re.I)

    def params(self, m, text):
        if re.search(r"\b(?:do\s+not|don't|no\s+need|not\s+required|not\s+necessary|optional)\b", text, re.I):
            return None
        rest = text[m.end():]
        qualified = bool(re.search(r"\b(?:cover|edge|verif|validat|check|ensur|such\s+as|including|that|which|where|for\s+\w|to\s+\w|with\s+\w)", rest, re.I))
        return {"qualified": qualified}

    def decide(self, p, code, run):
        if code.tree is None:
            return None, code.error
        found = _tests(code)
        if not found:
            return False, "no tests (no test functions, TestCase, asserts or doctests)"
        if p["qualified"]:
            return None, f"tests present ({found}); what they cover is for the judge"
        return True, f"tests present ({found})"


def _documentables(code: Code) -> list:
    tests = set()
    for d in code.defs():
        if isinstance(d, ast.ClassDef) and (d.name.startswith("Test") or any(_base_name(b) == "TestCase" for b in d.bases)):
            tests.update(id(n) for n in ast.walk(d))
    out = []
    for d in code.defs():
        if id(d) in tests or d.name.lower().startswith("test") or d.name.startswith("__") or d.name in {"setUp", "tearDown", "main"}:
            continue
        out.append(d)
    return out


class Docstrings(Rule):
    name = "docstrings"
    applies = "'include/add/provide/with docstrings' or 'documented with docstrings': functions and classes need docstrings"
    pattern = re.compile(r"\bdocstrings?\b", re.I)

    def params(self, m, text):
        if re.search(_NEG + r"[^.;]{0,30}docstring", text, re.I):
            return None
        return {"all": bool(re.search(r"\b(?:each|every|all)\b", text, re.I)),
                "qualified": bool(re.search(r"\b(?:describ\w*|explain\w*|parameters?|return|exceptions?|usage|purpose|clear\w*)\b", text, re.I))}

    def decide(self, p, code, run):
        if code.tree is None:
            return None, code.error
        items = _documentables(code)
        if not items:
            return None, "nothing to document"
        with_doc = [d for d in items if ast.get_docstring(d)]
        if not with_doc:
            if ast.get_docstring(code.tree):
                return None, "only a module docstring"
            return False, "no function or class has a docstring"
        if len(with_doc) == len(items):
            if p.get("qualified"):
                return None, "every function and class has a docstring; what they say is for the judge"
            return True, "every function and class has a docstring"
        missing = ", ".join(d.name for d in items if not ast.get_docstring(d))
        return (False, f"no docstring: {missing}") if p["all"] else (None, f"some docstrings; missing: {missing}")


class Comments(Rule):
    name = "comments"
    applies = "'include/add (inline/clear) comments' (not about docstrings): at least one comment needed; pass only if unqualified"
    pattern = re.compile(r"\b(?:include|includ\w+|add|provide|with|contain\w*|use)\s+(?:\w+\s+){0,2}?comments?\b", re.I)

    def params(self, m, text):
        if "docstring" in text.lower() or re.search(_NEG + r"[^.;]{0,30}comment", text, re.I):
            return None
        qualified = bool(re.search(r"\b(?:explain\w*|each|every|all|describ\w+|detail\w*|step|logic|purpose)\b", text, re.I))
        return {"qualified": qualified}

    def decide(self, p, code, run):
        n = code.comments()
        if n == 0 and not (code.tree and any(ast.get_docstring(d) for d in _documentables(code))):
            return False, "no comments"
        if p["qualified"]:
            return None, f"{n} comment(s); whether they explain enough is for the judge"
        return True, f"{n} comment(s)"


class TypeHints(Rule):
    name = "type_hints"
    applies = "'use/include/add type hints|type annotations': function parameters and returns need annotations"
    pattern = re.compile(r"\btype\s+(?:hints?|hinting|annotations?)\b", re.I)

    def params(self, m, text):
        return None if re.search(_NEG + r"[^.;]{0,30}type\s+(?:hint|annot)", text, re.I) else {}

    def decide(self, p, code, run):
        if code.tree is None:
            return None, code.error
        funcs = [d for d in _documentables(code) if not isinstance(d, ast.ClassDef)]
        if not funcs:
            return None, "no functions"
        def annotated(f):
            args = [a for a in f.args.posonlyargs + f.args.args + f.args.kwonlyargs if a.arg not in {"self", "cls"}]
            return all(a.annotation is not None for a in args) and (f.returns is not None or f.name == "__init__")
        some = [f for f in funcs if f.args.args and any(a.annotation is not None for a in f.args.args) or f.returns is not None]
        if not some:
            return False, "no annotations"
        full = [f for f in funcs if annotated(f)]
        if len(full) == len(funcs):
            return True, "every function is annotated"
        return None, "some functions annotated"


class RequiredLiteral(Rule):
    name = "required_literal"
    applies = ("'print/display/return/output/raise ... (the message|string) \"TEXT\"' with a quoted TEXT of 3+ "
               "characters: TEXT must appear as a string in the code (pass only when no condition is attached)")
    pattern = re.compile(r"\b(?:print|prints|printing|display|displays|return|returns|message|"
                         r"log|logs|raise)\b[^'\"\u201c\u2018]{0,40}?[\"\u201c](?P<lit>[^\"\u201d]{3,80})[\"\u201d]"
                         r"|\b(?:print|prints|display|displays|return|returns|message)\b"
                         r"[^'\"\u201c\u2018]{0,40}?(?<![A-Za-z])['\u2018](?P<lit2>[^'\u2019]{3,80})['\u2019](?![A-Za-z])", re.I)

    def params(self, m, text):
        lit = m.group("lit") or m.group("lit2")
        if re.search(r"\b(?:e\.g\.|for\s+example|such\s+as|like)\s*,?\s*$", text[:m.start("lit" if m.group("lit") else "lit2")].rstrip("'\"\u201c\u2018 "), re.I):
            return None
        around = m.group(0)[:m.start("lit" if m.group("lit") else "lit2") - m.start()] + " " + text[m.end():m.end() + 20]
        if re.search(r"\b(?:columns?|keys?|fields?|headers?|named|name|file|path|parameter|argument|attribute|rows?|values?)\b",
                     around, re.I):
            return None
        if lit.strip() != lit or lit.endswith((".py", ".csv", ".txt", ".json")) or "{" in lit:
            return None
        conditional = bool(re.search(r"\b(?:if|when|whenever|unless|otherwise|in\s+case|for\s+(?:each|every))\b", text, re.I))
        return {"literal": lit, "conditional": conditional}

    def decide(self, p, code, run):
        if code.tree is None:
            return None, code.error
        lit = p["literal"]
        strings = [n.value for n in code.nodes() if isinstance(n, ast.Constant) and isinstance(n.value, str)]
        found = any(lit in s for s in strings) or lit in code.text
        if not found:
            return False, f"{lit!r} does not occur in the code"
        if p["conditional"]:
            return None, f"{lit!r} occurs; when it is produced is for the judge"
        return True, f"{lit!r} occurs"


# --- behaviour on generic inputs (sandboxed) ---------------------------------------------------

_EXC = r"(?P<exc>[A-Z]\w*(?:Error|Exception)|(?:an?\s+)?(?:appropriate\s+|custom\s+)?exception)"
_COND = (r"(?P<cond>not\s+a\s+positive\s+integer|non-?positive|not\s+positive|empty|is\s+None|are\s+None|None\b|null|negative|non-?integer|not\s+an?\s+integer|non-?numeric|"
         r"not\s+(?:a\s+)?(?:number|numeric)|not\s+a\s+list|non-?list|not\s+a\s+string|non-?string|"
         r"(?:wrong|invalid|incorrect)\s+type|type\s+other\s+than)")


# inputs of these kinds cannot be made up generically ([] is not an empty DataFrame)
_NOT_GENERIC = re.compile(r"\b(?:data\s*frames?|df|series|arrays?|matrix|matrices|tensors?|files?|folders?|director(?:y|ies)|paths?|"
                          r"dict(?:ionary|ionaries)?|objects?|urls?|images?|models?|database|json)\b", re.I)


def _target(code: Code, text: str) -> tuple[str | None, str]:
    """The function a behavioural constraint is about: named in backticks, else the one top-level function."""
    if code.tree is None:
        return None, code.error
    top = [n for n in code.tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    by_name = {n.name: n for n in top}
    for name in re.findall(r"`([A-Za-z_]\w*)(?:\(.*?\))?`", text):
        if name in by_name:
            return name, ""
    candidates = [n for n in top if not n.name.startswith(("test", "_")) and n.name != "main"]
    if len(candidates) == 1:
        return candidates[0].name, ""
    return None, f"{len(candidates)} candidate functions at top level"


def _one_arg(code: Code, name: str) -> bool:
    f = next(n for n in code.tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name)
    if isinstance(f, ast.AsyncFunctionDef):
        return False
    required = len(f.args.posonlyargs) + len(f.args.args) - len(f.args.defaults)
    return required == 1 or (required == 0 and bool(f.args.args or f.args.posonlyargs))


def _inputs(cond: str) -> list[tuple]:
    c = cond.lower()
    if "positive" in c:
        return [(-1,), (0,)]
    if "empty" in c:
        return [([],), ("",)]
    if "none" in c or "null" in c:
        return [(None,)]
    if "negative" in c:
        return [(-1,)]
    if "integer" in c:
        return [("abc",), (1.5,)]
    if "numer" in c or "number" in c:
        return [("abc",)]
    if "list" in c:
        return [("abc",), (5,)]
    if "string" in c:
        return [(5,), ([1],)]
    return [(object,)] if False else [("abc",), (None,)]


class RaisesOnInput(Rule):
    name = "raises_on_input"
    dynamic = True
    applies = ("'raise X (if|when) the input is empty / None / negative / not an integer|number|list|string / of the wrong type': "
               "the one-argument function (named in backticks, or the only top-level one) is called in the sandbox on generic "
               "such inputs and must raise X")
    pattern = re.compile(r"\braise[sd]?\s+(?:an?\s+|the\s+exception\s+for:?\s+(?:\w+\.)*)?`?" + _EXC + r"`?[^.;]{0,80}?\b(?:if|when|whenever|for|on)\b[^.;]{0,60}?" + _COND, re.I)

    def params(self, m, text):
        if _NOT_GENERIC.search(text) or re.search(r"\bnot\s+empty\b", text, re.I):
            return None
        exc = m.group("exc")
        exc = None if "exception" in exc.lower() and not exc[0].isupper() else exc
        return {"exception": exc, "condition": m.group("cond").lower(), "text": text}

    def decide(self, p, code, run):
        name, why = _target(code, p["text"])
        if not name:
            return None, why
        if not _one_arg(code, name):
            return None, f"{name} does not take exactly one required argument"
        if run is None:
            return None, "no sandbox available"
        inputs = _inputs(p["condition"])
        outcomes = run(code.text, name, inputs)
        if isinstance(outcomes, str):
            return None, f"the code does not load: {outcomes}"
        want = p["exception"]
        hits = [o for o in outcomes if o[0] == "raise" and (want is None or o[1] == want
                                                          or (want == "Exception" and o[1] != "timeout"))]
        shown = ", ".join(f"{name}({a[0]!r}) -> {'raises ' + o[1] if o[0] == 'raise' else o[0]}" for a, o in zip(inputs, outcomes))
        if "empty" in p["condition"]:
            return bool(hits), shown
        return len(hits) == len(outcomes), shown


_RETURN_VALUES = [
    (r"an?\s+empty\s+list|\[\]", []), (r"an?\s+empty\s+string|''|\"\"", ""), (r"an?\s+empty\s+(?:dict|dictionary)|\{\}", {}),
    (r"None\b", None), (r"\bFalse\b", False), (r"\bTrue\b", True), (r"(?:0|zero)(?![\w.])", 0), (r"-1\b", -1),
    (r"an?\s+empty\s+tuple|\(\)", ()),
]


class ReturnsOnEmpty(Rule):
    name = "returns_on_empty"
    dynamic = True
    applies = ("'return V (if|when|for) (the input|list|string ...) is empty / (zero or) negative', V one of [], '', {}, None, "
               "False, True, 0, -1: the one-argument function is called in the sandbox on [] and '' (must return V for one) "
               "or on 0 and -1 / -1 (must return V for each)")
    pattern = re.compile(r"\breturn(?:s|ing)?\s+(?:a\s+(?:count|value|result)\s+of\s+)?`?(?P<val>an?\s+empty\s+(?:list|string|dict|dictionary|tuple)|\[\]|''|\"\"|\{\}|None|False|True|0|zero|-1|\(\))`?"
                         r"[^.;]{0,60}?\b(?:if|when|whenever|for|on|given)\b[^.;]{0,40}?\b(?P<cond>empty|(?:0|zero)\s+or\s+negative|negative|non-?positive|less\s+than\s+or\s+equal\s+to\s+(?:0|zero))\b", re.I)

    def params(self, m, text):
        if _NOT_GENERIC.search(text) or re.search(r"\bnot\s+empty\b", text, re.I):
            return None
        cond = m.group("cond").lower()
        inputs = [([],), ("",)] if cond == "empty" else [(-1,)] if cond == "negative" else [(0,), (-1,)]
        for rx, value in _RETURN_VALUES:
            if re.fullmatch(rx, m.group("val"), re.I):
                return {"value": value, "text": text, "inputs": inputs, "all": cond != "empty"}
        return None

    def decide(self, p, code, run):
        name, why = _target(code, p["text"])
        if not name:
            return None, why
        if not _one_arg(code, name):
            return None, f"{name} does not take exactly one required argument"
        if run is None:
            return None, "no sandbox available"
        inputs = [tuple(i) for i in p.get("inputs", [([],), ("",)])]
        outcomes = run(code.text, name, inputs)
        if isinstance(outcomes, str):
            return None, f"the code does not load: {outcomes}"
        want = p["value"]
        ok = [o for o in outcomes if o[0] == "ok" and type(o[1]) is type(want) and o[1] == want]
        if p.get("all"):
            ok = ok if len(ok) == len(outcomes) else []
        shown = ", ".join(f"{name}({a[0]!r}) -> {repr(o[1]) if o[0] == 'ok' else o[0] + ' ' + str(o[1])}" for a, o in zip(inputs, outcomes))
        return bool(ok), shown


# --- starter code, members, imports ------------------------------------------------------------

_STARTER = re.compile(r"starting\s+with:?\s*```(?:python)?[ \t]*\n(?P<code>.*?)```", re.S | re.I)


class StarterCode(Rule):
    name = "starter_code"
    applies = ("BigCodeBench's 'write self-contained code starting with (the provided starter code ...)' when the "
               "instruction shows the starter code: its imports must be imported and its def present with the same parameters")
    pattern = re.compile(r"self-contained\s+code\s+starting\s+with", re.I)

    def match(self, text, instruction=""):
        if not self.pattern.search(text):
            return None
        m = _STARTER.search(instruction or "") or _STARTER.search(text)
        if not m:
            return None
        try:
            tree = _quiet_parse(m.group("code").rstrip() + "\n    pass\n" if m.group("code").rstrip().endswith(":") else m.group("code"))
        except SyntaxError:
            return None
        imports = sorted(Code("", tree).imports() - {""})
        imports = [i for i in imports if not any(j.startswith(i + ".") for j in imports)]
        defs = [(d.name, [a.arg for a in d.args.posonlyargs + d.args.args + d.args.kwonlyargs])
                for d in ast.walk(tree) if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef))]
        return {"imports": imports, "defs": defs} if defs else None

    def decide(self, p, code, run):
        if code.tree is None:
            return None, code.error
        have = code.imports()
        missing = [i for i in p["imports"] if i not in have]
        funcs = {d.name: [a.arg for a in d.args.posonlyargs + d.args.args + d.args.kwonlyargs]
                 for d in code.nodes() if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef))}
        for name, params in p["defs"]:
            if name not in funcs:
                missing.append(f"def {name}")
            elif funcs[name] != params:
                missing.append(f"{name}({', '.join(params)}) (has {name}({', '.join(funcs[name])}))")
        if missing:
            return False, "starter code not kept: " + "; ".join(missing)
        return True, "starter imports and signature kept"


class MembersDefined(Rule):
    name = "members_defined"
    applies = ("'(should|must) have/implement/define/include/provide (a|the) method(s)/function(s) `a`, `b`' or "
               "'have a `x` method': each backticked name must be defined as a function or method")
    pattern = re.compile(r"\b(?:have|has|implement|implements|define|defines|include|includes|provide|provides|contain|contains|expose|exposes)\s+"
                         r"(?:a\s+|an\s+|the\s+|two\s+|three\s+|following\s+|public\s+|static\s+|class\s+|instance\s+|helper\s+)*"
                         r"(?:(?P<k1>methods?|functions?)\s*:?\s*(?P<list>`[A-Za-z_]\w*(?:\([^`]*)?`(?:\s*(?:,|and|,\s*and)\s*`[A-Za-z_]\w*(?:\([^`]*)?`)*)"
                         r"|`(?P<one>[A-Za-z_]\w*)(?:\([^`]*)?`\s+(?:method|function))", re.I)

    def params(self, m, text):
        if re.search(r"\b(?:assume|assuming|given\s+that|provided)\b", text[:m.start()], re.I):
            return None  # a fact about code the answer uses, not a demand on the answer
        names = re.findall(r"`([A-Za-z_]\w*)", m.group("list") or "") if m.group("list") else [m.group("one")]
        return {"names": names, "more": _asks_more(text[m.end():])}

    def decide(self, p, code, run):
        if code.tree is None:
            return None, code.error
        funcs = {d.name for d in code.defs() if not isinstance(d, ast.ClassDef)}
        missing = [n for n in p["names"] if n not in funcs]
        used = {n.attr for n in code.nodes() if isinstance(n, ast.Attribute)}
        if missing and set(missing) <= used:
            return None, f"not defined but called as a method of some object: {', '.join(missing)} (a library's?)"
        if missing:
            return False, f"not defined: {', '.join(missing)}"
        if p["more"]:
            return None, f"defined: {', '.join(p['names'])}; the rest of the constraint is for the judge"
        return True, f"defined: {', '.join(p['names'])}"


class NoImports(Rule):
    name = "no_imports"
    applies = ("'do not use / without (using|importing) any (external|third-party) libraries|modules|packages' with "
               "nothing after it: no imports at all (external: none outside the standard library)")
    pattern = re.compile(_NEG + r"\s+(?:the\s+)?(?:use|using|import|importing|rely\s+on|relying\s+on)\s+(?:of\s+)?any\s+"
                         r"(?P<ext>external\s+|third[- ]party\s+|additional\s+|built-in\s+)?(?:python\s+)?(?:libraries|modules|packages|imports)"
                         r"(?:\s+or\s+(?:modules|libraries|packages))?\s*(?:\.|$)", re.I)

    def params(self, m, text):
        if re.search(r"\b(?:" + "|".join(k for k in _LIB_WORDS if k not in _AMBIGUOUS) + r")\b", text, re.I):
            return None  # "use pandas ... and no external libraries": the rule cannot tell which are meant
        ext = (m.group("ext") or "").strip().lower()
        return {"external": ext.startswith(("external", "third", "additional"))}

    def decide(self, p, code, run):
        if code.tree is None:
            return None, code.error
        mods = {i for i in code.imports() if "." not in i}
        bad = sorted(i for i in mods if not (p["external"] and is_stdlib(i)))
        return (not bad), (f"imports {', '.join(bad)}" if bad else "no imports" if not mods else "standard library only")


_WORDLIKE = re.compile(r"[a-z]+")


class UsesCall(Rule):
    name = "uses_call"
    applies = ("'use/utilize/call/apply/employ (LIB's) NAME (function|method|class)' or a `backticked`/name() NAME after such "
               "a verb (NAME identifier-like: backticked, with () or _ or a dot or capitals, or a known built-in): NAME must be "
               "called or referenced")
    pattern = re.compile(r"\b(?:use|using|uses|utiliz(?:e|es|ing)|utilis(?:e|es|ing)|call(?:s|ing)?|apply(?:ing)?|employ(?:s|ing)?|leverag(?:e|es|ing)|invok(?:e|es|ing))\s+"
                         r"(?:the\s+|a\s+|an\s+|python'?s\s+|built-in\s+|\w+'s\s+)*"
                         r"(?P<name>`[A-Za-z_][\w.]*(?:\(.*?\))?`|[A-Za-z_][\w.]*\(\)|[A-Za-z_][\w.]*(?=\s+(?:function|method|class|decorator)\b)|(?-i:[A-Z][a-z]+[A-Z]\w*)(?=\s+(?:from|of)\s+\w))", re.I)

    def params(self, m, text):
        if re.search(_NEG + r"[^.;]{0,30}$", text[:m.start()], re.I) or \
                re.search(r"\b(?:than|instead\s+of|rather\s+than)\b[^.;]{0,30}$", text[:m.start()], re.I):
            return None
        raw = m.group("name")
        name = raw.strip("`").split("(")[0].rstrip(".")
        last = name.split(".")[-1]
        marked = raw.startswith("`") or raw.endswith("()")
        identifier_like = marked or "_" in name or "." in name or not _WORDLIKE.fullmatch(name) or last in _BUILTINS
        if not identifier_like or not last or last.lower() in {"provided", "following", "given", "same", "appropriate", "built"}:
            return None
        if _lib_key(last) in LIBRARIES and "." not in name:
            return None  # a library, not a callable: uses_library decides
        return {"name": last}

    def decide(self, p, code, run):
        if code.tree is None:
            return None, code.error
        name = p["name"]
        seen = name in code.called_names() or any(
            (isinstance(n, ast.Attribute) and n.attr == name) or (isinstance(n, ast.Name) and n.id == name)
            or (isinstance(n, ast.alias) and (n.name.split(".")[-1] == name)) for n in code.nodes())
        return seen, f"{name} is {'used' if seen else 'never used'}"


class CommandLineArgs(Rule):
    name = "command_line"
    applies = "'(accept|take|read|provided|passed) ... (as|via|from) command-line arguments': sys.argv, argparse, click, typer or fire must be used"
    pattern = re.compile(r"\bcommand[- ]line\s+arguments?\b", re.I)

    def params(self, m, text):
        return None if re.search(_NEG + r"[^.;]{0,40}command[- ]line", text, re.I) else {}

    def decide(self, p, code, run):
        if code.tree is None:
            return None, code.error
        used = bool({"argparse", "click", "typer", "fire", "getopt", "optparse"} & code.imports()) or "argv" in code.text
        return used, f"command-line parsing is {'present' if used else 'absent'} (sys.argv, argparse, click, ...)"


class NoSorting(Rule):
    name = "no_sorting"
    applies = "'do not use / without (any) built-in sort(ing) functions|methods': neither sorted() nor .sort() may be called"
    pattern = re.compile(_NEG + r"\s+(?:the\s+)?(?:use\s+|using\s+)?(?:of\s+)?(?:any\s+)?(?:python'?s\s+)?(?:built-in\s+|in-built\s+|inbuilt\s+)?"
                         r"sort(?:ing)?\s+(?:functions?|methods?|algorithms?|routines?)", re.I)

    def params(self, m, text):
        return None if re.match(r"\s*(?:to|for)\b", text[m.end():], re.I) else {}

    def decide(self, p, code, run):
        if code.tree is None:
            return None, code.error
        used = {"sorted", "sort"} & code.called_names()
        return (not used), (f"calls {', '.join(sorted(used))}" if used else "no sorted()/.sort() call")


class Parameters(Rule):
    name = "parameters"
    applies = ("'(the function|method) should take/accept/receive (a single parameter|as input) `x`(, `y` and `z`)': some "
               "function must have parameters with those names (pass only when nothing more is asked)")
    pattern = re.compile(r"\b(?:take|takes|accept|accepts|receive|receives)\s+(?:a\s+single\s+|an?\s+|the\s+|two\s+|three\s+|optional\s+)*"
                         r"(?:(?:parameters?|arguments?|inputs?)\s*:?\s*|as\s+(?:its\s+)?(?:input|argument|parameter)s?\s*:?\s*(?:the\s+)?)"
                         r"(?P<list>`[A-Za-z_]\w*`(?:\s*(?:,|and|,\s*and)\s*(?:the\s+)?`[A-Za-z_]\w*`)*)", re.I)

    def params(self, m, text):
        return {"names": re.findall(r"`([A-Za-z_]\w*)`", m.group("list")), "more": _asks_more(text[m.end():])
                or bool(re.match(r"\s*,?\s*(?:which|of|with|a|an)\b", text[m.end():], re.I))}

    def decide(self, p, code, run):
        if code.tree is None:
            return None, code.error
        sigs = [{a.arg for a in f.args.posonlyargs + f.args.args + f.args.kwonlyargs}
                for f in code.nodes() if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]
        if any(set(p["names"]) <= s for s in sigs):
            return (None, "a function has these parameters; the rest is for the judge") if p["more"] else \
                (True, f"a function takes {', '.join(p['names'])}")
        return False, f"no function takes {', '.join(p['names'])}"


class RandomSeed(Rule):
    name = "random_seed"
    applies = "'set / use / allow setting a random seed': the code must mention a seed or random_state (never decides pass)"
    pattern = re.compile(r"\b(?:random\s+seed|seed\s+value|set(?:ting)?\s+(?:a|the)\s+seed|random_state)\b", re.I)

    def decide(self, p, code, run):
        if code.tree is None:
            return None, code.error
        if re.search(r"seed|random_state", code.text, re.I):
            return None, "a seed is mentioned; whether it is used as asked is for the judge"
        return False, "no seed or random_state anywhere"


class NoSlicing(Rule):
    name = "no_slicing"
    applies = "'do not use / without (using) slicing|slices|slice notation': no a[i:j] anywhere"
    pattern = re.compile(_NEG + r"\s+(?:the\s+)?(?:use\s+|using\s+)?(?:of\s+)?(?:any\s+)?(?:string\s+|list\s+)?(?:slicing|slices?|slice\s+notation)\b", re.I)

    def params(self, m, text):
        return None if re.match(r"\s*(?:to|for)\b", text[m.end():], re.I) else {}

    def decide(self, p, code, run):
        if code.tree is None:
            return None, code.error
        sl = next((n for n in code.nodes() if isinstance(n, ast.Slice)), None)
        return (sl is None), (f"line {sl.lineno} slices" if sl is not None else "no slicing")


class NameAssigned(Rule):
    name = "name_assigned"
    applies = "'a variable|dictionary|list|constant|set named|called `X`': X must be assigned somewhere"
    pattern = re.compile(r"\b(?:variable|dictionary|dict|list|constant|set|tuple|counter)\s+(?:should\s+be\s+|must\s+be\s+)?(?:named|called)\s+[`'\"](?P<name>[A-Za-z_]\w*)[`'\"]", re.I)

    def params(self, m, text):
        return {"name": m.group("name")}

    def decide(self, p, code, run):
        if code.tree is None:
            return None, code.error
        for n in code.nodes():
            targets = []
            if isinstance(n, (ast.Assign,)):
                targets = n.targets
            elif isinstance(n, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr)):
                targets = [n.target]
            for t in targets:
                for x in ast.walk(t):
                    if (isinstance(x, ast.Name) and x.id == p["name"]) or (isinstance(x, ast.Attribute) and x.attr == p["name"]):
                        return True, f"{p['name']} is assigned"
        return False, f"{p['name']} is never assigned"


RULES: tuple[Rule, ...] = (
    StarterCode(), NoImports(), RaisesOnInput(), ReturnsOnEmpty(), ForbiddenOperator(), NoSorting(), NoSlicing(), Recursion(), Loops(), ForbiddenCall(), Inherits(),
    NameDefined(), NameAssigned(), MembersDefined(), TestsPresent(), Docstrings(), TypeHints(), Comments(), CommandLineArgs(),
    UsesConstruct(), FunctionWrapped(), Parameters(), RandomSeed(), UsesCall(), UsesLibrary(), RequiredLiteral(),
)
RULES_BY_NAME = {r.name: r for r in RULES}


def select(text: str, instruction: str = "") -> tuple[Rule, dict[str, Any]] | None:
    """The rule that applies to a constraint text, with its parameters (first match in :data:`RULES`)."""
    for rule in RULES:
        params = rule.match(text, instruction)
        if params is not None:
            return rule, params
    return None


def check(text: str, code: Code, run: Runner | None, instruction: str = "") -> Verdict | None:
    """The rule verdict for one constraint on one answer's code; None when no rule applies."""
    chosen = select(text, instruction)
    if chosen is None:
        return None
    rule, params = chosen
    verdict, reason = rule.decide(params, code, run)
    return Verdict(rule.name, verdict, reason)


def is_stdlib(module: str) -> bool:
    return module.split(".")[0] in sys.stdlib_module_names
