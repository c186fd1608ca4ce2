# SPDX-License-Identifier: MIT
"""The mutable sites of daemon/'s C files, found rather than chosen: the drawn mutants.

A small C lexer (comments, string and character literals and preprocessor lines are never
mutated) feeds a pass that finds every site of six classes, each one mutant in the format of
mutants.ini (file, a `from` that stands once in the file on one line, `to`):

  comparison  `<` `<=` `>` `>=` to their neighbour and their negation, `==` <-> `!=`
  condition   `if (x)` / `while (x)` -> `if (!(x))`
  logic       `&&` <-> `||`
  constant    an integer literal n -> n+1 and n-1, 0 -> 1
  status      in a function returning int: `return -E...;` -> 0 and another error,
              `return -1;` -> 0, `return 0;` -> -1
  removal     a statement call of free, close, pthread_mutex_unlock, json_decref, *_free,
              *_close, *_unlock -> `(void)0;`; and a check: `if (call() ...)` whose branch
              leaves (goto, return, break, continue) -> `if (0)`

Skipped, and why: preprocessor lines (a #define's number has no one place it acts; #if picks
builds), _Static_assert (a changed one does not build or changes nothing), __attribute__
(build-time), the size of an array in a declaration and everything in a struct or union body
(layout: growing a buffer is seldom observable, shrinking one is what the bounds' own
constants test), a condition or call that spans lines (a mutant changes one line), constants of
a `return` the status class already changes, and a site whose line stands more than once in
its file (no `from` can name it).
"""
import hashlib
import os
import random
import re
import subprocess

CLASSES = ("comparison", "condition", "logic", "constant", "status", "removal")

KEYWORDS = {"if", "while", "for", "switch", "return", "sizeof", "do", "else", "case", "goto",
            "break", "continue", "default", "_Alignof", "alignof", "defined", "typeof",
            "__typeof__", "_Generic", "__builtin_offsetof", "offsetof"}
RELEASES = {"free", "close", "pthread_mutex_unlock", "json_decref"}
RELEASE_SUFFIXES = ("_free", "_close", "_unlock")
STATUS_TYPES = ({"int"}, {"ssize_t"}, {"long"})
COMPARISONS = {"<": ("<=", ">="), "<=": ("<", ">"), ">": (">=", "<="), ">=": (">", "<"),
               "==": ("!=",), "!=": ("==",)}
PUNCTUATORS = sorted(["<<=", ">>=", "...", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=",
                      "&&", "||", "*=", "/=", "%=", "+=", "-=", "&=", "^=", "|=", "##"],
                     key=len, reverse=True)
INTEGER = re.compile(r"(0[xX][0-9a-fA-F]+|[1-9][0-9]*|0[0-7]*)([uUlL]*)$")


class Token:
    __slots__ = ("kind", "text", "line", "start", "end")

    def __init__(self, kind, text, line, start, end):
        self.kind, self.text, self.line, self.start, self.end = kind, text, line, start, end

    def __repr__(self):
        return f"{self.kind}:{self.text}@{self.line + 1}:{self.start}"


def tokenize(text):
    """The tokens of C text, with line and columns; no comment, no preprocessor line."""
    tokens = []
    lines = text.split("\n")
    in_comment = False
    continued = False  # the line continues a preprocessor line
    for number, line in enumerate(lines):
        i = 0
        if not in_comment and (continued or line.lstrip().startswith("#")):
            continued = line.endswith("\\")
            # A comment opened on a preprocessor line and left open goes on past it.
            body = re.sub(r"/\*.*?\*/", "", line)
            in_comment = "/*" in body
            continue
        while i < len(line):
            if in_comment:
                close = line.find("*/", i)
                if close < 0:
                    break
                in_comment = False
                i = close + 2
                continue
            c = line[i]
            if c.isspace():
                i += 1
            elif line.startswith("//", i):
                break
            elif line.startswith("/*", i):
                in_comment = True
                i += 2
            elif c in "\"'":
                j = i + 1
                while j < len(line) and line[j] != c:
                    j += 2 if line[j] == "\\" else 1
                tokens.append(Token("str" if c == '"' else "chr", line[i:j + 1], number, i, j + 1))
                i = j + 1
            elif c.isalpha() or c == "_":
                m = re.match(r"[A-Za-z_0-9]+", line[i:])
                word = m.group(0)
                # A prefix (u8"..", L'..') is a word; the literal after it, a literal.
                tokens.append(Token("id", word, number, i, i + len(word)))
                i += len(word)
            elif c.isdigit() or (c == "." and i + 1 < len(line) and line[i + 1].isdigit()):
                m = re.match(r"\.?[0-9](?:[eEpP][+-]|[0-9A-Za-z_.])*", line[i:])
                tokens.append(Token("num", m.group(0), number, i, i + len(m.group(0))))
                i += len(m.group(0))
            else:
                for p in PUNCTUATORS:
                    if line.startswith(p, i):
                        break
                else:
                    p = c
                tokens.append(Token("op", p, number, i, i + len(p)))
                i += len(p)
    return tokens, lines


def matching(tokens, index):
    """The index of the bracket closing the one at index."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    opening = tokens[index].text
    closing = pairs[opening]
    depth = 0
    for j in range(index, len(tokens)):
        if tokens[j].kind != "op":
            continue
        if tokens[j].text == opening:
            depth += 1
        elif tokens[j].text == closing:
            depth -= 1
            if depth == 0:
                return j
    return None


class Site:
    """One mutant: the text of tokens[first..last] on one line becomes replacement."""
    __slots__ = ("cls", "line", "start", "end", "replacement", "path", "module", "original",
                 "ident", "to_text")

    def __init__(self, cls, line, start, end, replacement):
        self.cls, self.line, self.start, self.end = cls, line, start, end
        self.replacement = replacement
        self.path = self.module = self.original = self.ident = self.to_text = None


def analyse(tokens):
    """Per token: skipped (in a region never mutated), and the status type of its function."""
    skipped = [False] * len(tokens)
    status_function = [False] * len(tokens)
    i = 0
    while i < len(tokens):
        t = tokens[i]
        if t.kind == "id" and t.text in ("_Static_assert", "static_assert", "__attribute__",
                                          "__attribute", "asm", "__asm__") \
                and i + 1 < len(tokens) and tokens[i + 1].text == "(":
            end = matching(tokens, i + 1) or i + 1
            for j in range(i, end + 1):
                skipped[j] = True
            i = end + 1
            continue
        if t.kind == "id" and t.text in ("struct", "union"):
            # struct NAME { ... }: a layout, not logic.
            j = i + 1
            if j < len(tokens) and tokens[j].kind == "id":
                j += 1
            if j < len(tokens) and tokens[j].text == "{":
                end = matching(tokens, j) or j
                for k in range(j, end + 1):
                    skipped[k] = True
                i = end + 1
                continue
        i += 1
    # Functions: at depth 0, `) {` opens a body; its header runs from the last `;` or `}`.
    depth = 0
    header_start = 0
    i = 0
    while i < len(tokens):
        t = tokens[i]
        if t.text == "{" and t.kind == "op":
            if depth == 0 and i > 0 and tokens[i - 1].text == ")":
                end = matching(tokens, i)
                if end is None:
                    break
                returns = status_header(tokens[header_start:i])
                for k in range(i, end + 1):
                    status_function[k] = returns
                i = end + 1
                header_start = i
                continue
            depth += 1
        elif t.text == "}" and t.kind == "op":
            depth -= 1
            if depth == 0:
                header_start = i + 1
        elif t.text == ";" and depth == 0:
            header_start = i + 1
        i += 1
    return skipped, status_function


def status_header(header):
    paren = next((k for k, t in enumerate(header) if t.text == "("), None)
    if paren is None or paren == 0:
        return False
    kinds = {t.text for t in header[:paren - 1]} - {"static", "inline", "extern"}
    return kinds in STATUS_TYPES


def in_array_declaration(tokens, index):
    """The constant at index sizes an array in a declaration: `char name[64]` and the like."""
    if index < 2 or tokens[index - 1].text != "[" or tokens[index + 1].text != "]":
        return False
    if tokens[index - 2].kind != "id":
        return False
    k = index - 3
    seen = 0
    while k >= 0 and tokens[k].text not in (";", "{", "}", ","):
        if tokens[k].kind != "id" and tokens[k].text not in ("*", "]", "["):
            return False
        if tokens[k].kind == "id" and tokens[k].text in KEYWORDS:
            return False
        seen += 1
        k -= 1
    return seen > 0 or (k >= 0 and tokens[k].text == ",")


def integer_variants(text):
    m = INTEGER.match(text)
    if not m:
        return []
    digits, suffix = m.groups()
    if digits.lower().startswith("0x"):
        value, form = int(digits, 16), (lambda n: f"0x{n:X}" if digits[2:].isupper()
                                        else f"0x{n:x}")
    elif len(digits) > 1 and digits.startswith("0"):
        value, form = int(digits, 8), (lambda n: f"0{n:o}")
    else:
        value, form = int(digits), str
    values = [value + 1] if value == 0 else [value + 1, value - 1]
    return [form(v) + suffix for v in values]


def exits(tokens, body):
    """The statement at body leaves: goto, return, break, continue, or a block ending so."""
    if body >= len(tokens):
        return False
    if tokens[body].text in ("goto", "return", "break", "continue"):
        return True
    if tokens[body].text != "{":
        return False
    end = matching(tokens, body)
    if end is None:
        return False
    # The last statement of the block: back from its `;` to the one before.
    k = end - 2
    while k > body and tokens[k].text not in (";", "{", "}"):
        k -= 1
    return tokens[k + 1].text in ("goto", "return", "break", "continue")


def find_sites(text):
    """Every site of text (C source), as Site objects with replacement texts."""
    tokens, lines = tokenize(text)
    skipped, status_function = analyse(tokens)
    sites = []
    status_tokens = set()

    def add(cls, first, last, replacement):
        if tokens[first].line != tokens[last].line:
            return
        sites.append(Site(cls, tokens[first].line, tokens[first].start, tokens[last].end,
                          replacement))

    def span(first, last):
        return lines[tokens[first].line][tokens[first].start:tokens[last].end]

    for i, t in enumerate(tokens):
        if skipped[i]:
            continue
        # status: return -E..; return -1; return 0; in a function returning int
        if t.text == "return" and status_function[i]:
            rest = [x.text for x in tokens[i + 1:i + 4]]
            if rest[:1] == ["-"] and len(rest) == 3 and rest[2] == ";" and \
                    re.fullmatch(r"E[A-Z0-9]+", rest[1]):
                other = "-EIO" if rest[1] == "EINVAL" else "-EINVAL"
                add("status", i + 1, i + 2, "0")
                add("status", i + 1, i + 2, other)
                status_tokens.update((i + 1, i + 2))
            elif rest[:3] == ["-", "1", ";"]:
                add("status", i + 1, i + 2, "0")
                status_tokens.update((i + 1, i + 2))
            elif rest[:2] == ["0", ";"]:
                add("status", i + 1, i + 1, "-1")
                status_tokens.add(i + 1)
    for i, t in enumerate(tokens):
        if skipped[i]:
            continue
        if t.kind == "op" and t.text in COMPARISONS:
            for other in COMPARISONS[t.text]:
                add("comparison", i, i, other)
        elif t.kind == "op" and t.text in ("&&", "||"):
            add("logic", i, i, "||" if t.text == "&&" else "&&")
        elif t.kind == "num" and i not in status_tokens:
            if in_array_declaration(tokens, i) or \
                    (i > 0 and tokens[i - 1].text == "." and tokens[i - 1].kind == "op"):
                continue
            for variant in integer_variants(t.text):
                add("constant", i, i, variant)
        elif t.kind == "id" and t.text in ("if", "while") and i + 1 < len(tokens) and \
                tokens[i + 1].text == "(":
            close = matching(tokens, i + 1)
            if close is None or tokens[close].line != t.line:
                continue
            inner = span(i + 2, close - 1) if close > i + 2 else ""
            if not inner:
                continue
            add("condition", i + 1, close, f"(!({inner}))")
            calls = any(tokens[k].kind == "id" and tokens[k].text not in KEYWORDS and
                        tokens[k + 1].text == "(" for k in range(i + 2, close - 1))
            if t.text == "if" and calls and exits(tokens, close + 1):
                add("removal", i + 1, close, "(0)")
        elif t.kind == "id" and (t.text in RELEASES or t.text.endswith(RELEASE_SUFFIXES)) and \
                i + 1 < len(tokens) and tokens[i + 1].text == "(" and i > 0 and \
                (tokens[i - 1].text in (";", "{", "}", "else") or
                 (tokens[i - 1].text == ")" and controls(tokens, i - 1))):
            close = matching(tokens, i + 1)
            if close is not None and close + 1 < len(tokens) and tokens[close + 1].text == ";":
                add("removal", i, close + 1, "(void)0;")
    return sites, lines


def controls(tokens, close):
    """The `)` at close ends the condition of an if, while or for."""
    depth = 0
    for k in range(close, -1, -1):
        if tokens[k].text == ")":
            depth += 1
        elif tokens[k].text == "(":
            depth -= 1
            if depth == 0:
                return k > 0 and tokens[k - 1].text in ("if", "while", "for")
    return False


def name_site(site, text, lines):
    """The site's `from` is its whole line (without indentation), when that stands once in
    text: no shorter text can stand once where the line does not. False when it does not."""
    line = lines[site.line]
    left = len(line) - len(line.lstrip())
    right = len(line.rstrip())
    original = line[left:right]
    if text.count(original) != 1:
        return False
    site.original = original
    site.to_text = line[left:site.start] + site.replacement + line[site.end:right]
    return True


def read_modules(list_path):
    """The module the hand list names each file's mutants after (the commonest)."""
    counts = {}
    current = None
    try:
        with open(list_path, encoding="utf-8") as f:
            for raw in f:
                raw = raw.strip()
                if raw.startswith("["):
                    current = raw[1:raw.index("]")].split(".", 1)[0]
                elif raw.startswith("file =") and current:
                    path = raw.split("=", 1)[1].strip()
                    per = counts.setdefault(path, {})
                    per[current] = per.get(current, 0) + 1
    except FileNotFoundError:
        pass
    # The commonest; on a tie, the file's stem if it is one of them.
    return {path: max(sorted(per), key=lambda m: (per[m], m == stem(path)))
            for path, per in counts.items()}


def stem(path):
    return os.path.splitext(os.path.basename(path))[0]


def module_of(path, modules):
    return modules.get(path) or stem(path)


def all_sites(root, list_path=None, files=None, unnamed=None):
    """Every named site of daemon/**/*.c under root (or of files), in a stable order; unnamed,
    a dict, counts per class the sites whose line stands more than once."""
    modules = read_modules(list_path) if list_path else {}
    if files is None:
        files = []
        for directory, _, names in os.walk(os.path.join(root, "daemon")):
            files += [os.path.relpath(os.path.join(directory, n), root)
                      for n in names if n.endswith(".c")]
    found = []
    seen = set()
    for path in sorted(files):
        with open(os.path.join(root, path), encoding="utf-8") as f:
            text = f.read()
        sites, lines = find_sites(text)
        for site in sites:
            if not name_site(site, text, lines):
                if unnamed is not None:
                    unnamed[site.cls] = unnamed.get(site.cls, 0) + 1
                continue
            key = (path, site.original, site.to_text)
            if key in seen or site.original == site.to_text:
                continue
            seen.add(key)
            site.path = path
            site.module = module_of(path, modules)
            digest = hashlib.sha256("\0".join(key).encode()).hexdigest()[:10]
            site.ident = f"drawn.{site.module}.{stem(path)}.{digest}"
            found.append(site)
    return found


def seed_of(root, seed=None, commit=None):
    """The sample's seed: given, or a commit's hash (HEAD by default), as run's sample does."""
    if seed is not None:
        return str(seed)
    rev = subprocess.run(["git", "-C", root, "rev-parse", commit or "HEAD"],
                         capture_output=True, text=True).stdout.strip()
    if not rev and commit:
        raise ValueError(f"no commit {commit}")
    return rev or "no-commit"


def draw(sites, count, seed):
    """count sites drawn from sites, the same for the same seed and sites."""
    number = int(hashlib.sha256(seed.encode()).hexdigest()[:16], 16)
    order = sorted(sites, key=lambda s: s.ident)
    random.Random(number).shuffle(order)
    return order[:count]


def line_of(site_or_path, root, original):
    """The line number where original stands in the file, 0 when it is gone."""
    try:
        with open(os.path.join(root, site_or_path), encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return 0
    at = text.find(original)
    return text.count("\n", 0, at) + 1 if at >= 0 else 0


def format_ini(sites):
    out = []
    for site in sites:
        out.append(f"[{site.ident}]\n# {site.cls}, line {site.line + 1}\n"
                   f"file = {site.path}\nfrom = {site.original}\nto = {site.to_text}\n")
    return "\n".join(out)
