#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The mutant generator (sites.py, draw) on a fixture C file and on the tree: each class gives
sites, comments, strings and preprocessor lines give none, every `from` stands once, the same
seed draws the same sample and another seed another, and the sample of the tree applies."""
import configparser
import os
import subprocess
import sys
import tempfile
import types
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.realpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import drawn  # noqa: E402
import sites  # noqa: E402

FIXTURE = r'''/* SPDX-License-Identifier: MIT */
/* A comment with a < b, c == d, e && f, 17 and if (x) in it. */
#include <stdlib.h>
#define LIMIT 64
#if LIMIT > 32 && LIMIT < 128
#endif
_Static_assert(LIMIT == 64, "checked when built");

struct pair {
    int first[3];
    int second : 4;
};

static int check(int value);

int bounded(int value, char *copy)
{
    char buffer[16];
    const char *text = "x < y && z != 3"; // and a line comment: w >= 9
    if (check(value) < 0)
        goto fail;
    if (value > 10 && value <= 200)
        return -EINVAL;
    while (value != 0)
        value--;
    buffer[0] = text[2] == '<' ? 'y' : 'n'; /* p || q */
    free(copy);
    return 0;
fail:
    return -1;
}

static char *name(int which)
{
    if (which)
        return 0;
    return "name";
}
'''


def fixture_sites(text=FIXTURE):
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "daemon"))
        with open(os.path.join(root, "daemon", "fixture.c"), "w", encoding="utf-8") as f:
            f.write(text)
        return sites.all_sites(root)


class Fixture(unittest.TestCase):
    def setUp(self):
        self.sites = fixture_sites()
        self.lines = FIXTURE.split("\n")

    def on_line(self, number):
        return [s for s in self.sites if s.line + 1 == number]

    def test_each_class_gives_sites(self):
        classes = {s.cls for s in self.sites}
        self.assertEqual(classes, set(sites.CLASSES))

    def test_comments_strings_and_preprocessor_are_not_mutated(self):
        for number in range(1, 15):  # comment, #include, #define, #if, _Static_assert, struct
            self.assertEqual(self.on_line(number), [], self.lines[number - 1])
        declaration = self.lines.index('    const char *text = "x < y && z != 3"; '
                                       '// and a line comment: w >= 9') + 1
        self.assertEqual(self.on_line(declaration), [])
        # `buffer[0] = text[2] == '<'` and a comment: the comparison, the 0 and the 2, nothing
        # in '<' or p || q.
        ternary = [s for s in self.sites if "text[2]" in s.original]
        self.assertEqual(sorted(s.cls for s in ternary), ["comparison"] + ["constant"] * 3)
        for site in ternary:
            self.assertTrue(site.to_text.endswith("'y' : 'n'; /* p || q */"), site.to_text)

    def test_array_declaration_sizes_are_skipped(self):
        self.assertFalse([s for s in self.sites if "buffer[16]" in s.original])
        self.assertIn("buffer[1] = text[2] == '<' ? 'y' : 'n'; /* p || q */",
                      {s.to_text for s in self.sites if s.cls == "constant"})

    def test_classes_give_the_mutants_they_say(self):
        tos = {(s.cls, s.original, s.to_text) for s in self.sites}
        expected = [
            ("comparison", "if (value > 10 && value <= 200)", "if (value >= 10 && value <= 200)"),
            ("comparison", "if (value > 10 && value <= 200)", "if (value <= 10 && value <= 200)"),
            ("comparison", "while (value != 0)", "while (value == 0)"),
            ("condition", "while (value != 0)", "while (!(value != 0))"),
            ("logic", "if (value > 10 && value <= 200)", "if (value > 10 || value <= 200)"),
            ("constant", "if (value > 10 && value <= 200)", "if (value > 11 && value <= 200)"),
            ("constant", "if (value > 10 && value <= 200)", "if (value > 9 && value <= 200)"),
            ("constant", "while (value != 0)", "while (value != 1)"),
            ("status", "return -EINVAL;", "return 0;"),
            ("status", "return -EINVAL;", "return -EIO;"),
            ("status", "return -1;", "return 0;"),
            ("removal", "free(copy);", "(void)0;"),
            ("removal", "if (check(value) < 0)", "if (0)"),
        ]
        for mutant in expected:
            self.assertIn(mutant, tos)

    def test_status_only_in_functions_returning_int(self):
        # `return 0;` stands twice (bounded, name): no from names either; name's returns a
        # pointer, which -1 is not.
        self.assertFalse([s for s in self.sites if s.cls == "status" and "0;" in s.original])
        self.assertFalse([s for s in self.sites if s.line + 1 >= 35 and s.cls == "status"])

    def test_every_from_stands_once_and_ids_are_unique(self):
        for site in self.sites:
            self.assertEqual(FIXTURE.count(site.original), 1, site.original)
            self.assertNotIn("\n", site.original)
            self.assertNotEqual(site.original, site.to_text)
            self.assertTrue(site.ident.startswith("drawn.fixture.fixture."), site.ident)
        self.assertEqual(len({s.ident for s in self.sites}), len(self.sites))

    def test_ids_survive_a_line_moving(self):
        moved = fixture_sites(FIXTURE.replace("static int check(int value);\n",
                                              "static int check(int value);\n\n\n"))
        self.assertEqual({s.ident for s in moved}, {s.ident for s in self.sites})

    def test_same_seed_same_sample_other_seed_other_sample(self):
        first = [s.ident for s in sites.draw(self.sites, 10, "a")]
        self.assertEqual(first, [s.ident for s in sites.draw(list(reversed(self.sites)), 10,
                                                              "a")])
        self.assertNotEqual(first, [s.ident for s in sites.draw(self.sites, 10, "b")])


class Verdicts(unittest.TestCase):
    def test_a_verdict_matches_by_what_it_makes_of_the_file(self):
        with tempfile.TemporaryDirectory() as root:
            os.makedirs(os.path.join(root, "daemon"))
            with open(os.path.join(root, "daemon", "fixture.c"), "w", encoding="utf-8") as f:
                f.write(FIXTURE)
            found = [s for s in sites.all_sites(root) if s.cls == "logic"]
            mutant = types.SimpleNamespace(path=found[0].path, original=found[0].original,
                                           replacement=found[0].to_text, same_as=None,
                                           equivalent=None, survives=None)
            # The verdict names the change by a narrower text than the drawn line.
            entry = {"ident": "by-hand", "file": "daemon/fixture.c", "from": "10 && value",
                     "to": "10 || value", "equivalent": "why"}
            other = dict(entry, ident="other", to="10 & value")
            drawn.annotate([mutant], [], [other, entry], root)
            self.assertEqual((mutant.same_as, mutant.equivalent), ("by-hand", "why"))
            self.assertEqual(drawn.check_equivalents([entry], root), [])
            self.assertEqual(len(drawn.check_equivalents([dict(entry, **{"from": "value"})],
                                                         root)), 1)


class Tree(unittest.TestCase):
    def test_every_site_of_the_tree_applies_once(self):
        found = sites.all_sites(ROOT, os.path.join(HERE, "mutants.ini"))
        self.assertGreater(len(found), 1000)
        texts = {}
        for site in found:
            if site.path not in texts:
                with open(os.path.join(ROOT, site.path), encoding="utf-8") as f:
                    texts[site.path] = f.read()
            self.assertEqual(texts[site.path].count(site.original), 1, site.ident)
            self.assertNotIn("\n", site.original + site.to_text)
        self.assertEqual(len({s.ident for s in found}), len(found))
        self.assertEqual({s.cls for s in found}, set(sites.CLASSES))

    def test_draw_prints_the_same_sample_for_the_same_seed(self):
        def draw(*args):
            # Three files of the tree: the whole of it is the test above's.
            files = ["daemon/base/buffer.c", "daemon/json/json_scan.c", "daemon/base/log.c"]
            return subprocess.run([sys.executable, os.path.join(HERE, "draw")] + list(args) +
                                  files, check=True, capture_output=True, text=True).stdout

        first = draw("--count", "25", "--seed", "7")
        self.assertEqual(first, draw("--count", "25", "--seed", "7"))
        self.assertNotEqual(first, draw("--count", "25", "--seed", "8"))
        parser = configparser.ConfigParser(interpolation=None, comment_prefixes=("#",),
                                           inline_comment_prefixes=None)
        parser.optionxform = str
        parser.read_string(first)
        self.assertEqual(len(parser.sections()), 25)
        for name in parser.sections():
            entry = parser[name]
            with open(os.path.join(ROOT, entry["file"]), encoding="utf-8") as f:
                self.assertEqual(f.read().count(entry["from"]), 1, name)
            self.assertNotEqual(entry["from"], entry["to"])
        # An entry of drawn-equivalent.ini is these same fields: the check takes them.
        entries = [dict(parser[name], ident=name, equivalent="x") for name in parser.sections()]
        self.assertEqual(drawn.check_equivalents(entries, ROOT), [])
        self.assertIn("comparison", draw("--stats"))


if __name__ == "__main__":
    unittest.main()
