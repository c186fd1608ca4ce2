#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Compares the public ABI of <rpcd/plugin.h>, as abidw reads it from abi_probe.so, with the baseline
# rpcd-plugin.abi: additions pass (members appended at the end of a structure, new enumerators, new
# types with their probe function), any other change fails with abidiff's report. --update
# rewrites the baseline.
import argparse
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

# abidiff's exit status is a bit field (libabigail's abidiff manual, "Return values").
ABIDIFF_ERROR = 1
ABIDIFF_USAGE_ERROR = 2
ABIDIFF_ABI_CHANGE = 4
ABIDIFF_ABI_INCOMPATIBLE_CHANGE = 8


def abidw(args, out):
    # Neither paths nor source locations: the baseline does not change when the header is only
    # re-wrapped or the tree moves. Only the types the probe's functions reach: all of the header's,
    # and none of the C library's own that the compiler happens to describe.
    subprocess.run([args.abidw, '--headers-dir', args.headers, '--no-corpus-path',
                    '--no-comp-dir-path', '--no-show-locs', '--out-file', out, args.probe],
                   check=True)


def abidiff(args, old, new):
    run = subprocess.run([args.abidiff, old, new],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return run.returncode, run.stdout


def trim_appended(baseline, fresh, out):
    """Writes fresh without the members appended to the structures of baseline, at their old size.

    What is left differs from the baseline only if something other than an append happened: a
    member removed, moved, renamed or retyped, or a structure that shrank.
    """
    old_sizes = {}
    for decl in ET.parse(baseline).iter('class-decl'):
        if decl.get('name') and decl.get('size-in-bits'):
            old_sizes[decl.get('name')] = int(decl.get('size-in-bits'))
    tree = ET.parse(fresh)
    trimmed = []
    for decl in tree.iter('class-decl'):
        old = old_sizes.get(decl.get('name'))
        if old is None or not decl.get('size-in-bits') or int(decl.get('size-in-bits')) <= old:
            continue
        for member in list(decl.findall('data-member')):
            if int(member.get('layout-offset-in-bits', '0')) >= old:
                decl.remove(member)
                trimmed.append('%s.%s' % (decl.get('name'), member.find('var-decl').get('name')))
        decl.set('size-in-bits', str(old))
    tree.write(out)
    return trimmed


def members_lost(baseline, fresh):
    """Lists the members and enumerators of baseline not found in fresh with their offset or value.

    abidiff takes a renamed member of the same type at the same offset for a harmless change; it
    still breaks every plugin's source, so it fails here.
    """
    def members(path):
        found = {}
        for decl in ET.parse(path).iter('class-decl'):
            if decl.get('name') and decl.get('size-in-bits'):
                found[decl.get('name')] = [
                    (member.get('layout-offset-in-bits'), member.find('var-decl').get('name'))
                    for member in decl.findall('data-member')]
        for decl in ET.parse(path).iter('enum-decl'):
            if decl.get('name'):
                found[decl.get('name')] = [(item.get('value'), item.get('name'))
                                           for item in decl.findall('enumerator')]
        return found
    old, new = members(baseline), members(fresh)
    lost = []
    for name, items in old.items():
        for item in items:
            if name in new and item not in new[name]:
                lost.append('%s.%s' % (name, item[1]))
    return lost


def architecture(path):
    return ET.parse(path).getroot().get('architecture')


def only_additions(report):
    """True when every summary line of an abidiff report counts no removal and no change."""
    for line in report.splitlines():
        if 'summary:' in line and ('Functions changes' in line or 'Variables changes' in line):
            counts = line.split(':', 1)[1].lower()
            if not counts.strip().startswith('0 removed') or ' 0 changed' not in counts:
                return False
    return True


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--abidw', required=True)
    parser.add_argument('--abidiff', required=True)
    parser.add_argument('--headers', required=True, help='directory of the public headers')
    parser.add_argument('--probe', required=True, help='abi_probe.so, built with -g')
    parser.add_argument('--baseline', required=True)
    parser.add_argument('--update', action='store_true', help='rewrite the baseline')
    args = parser.parse_args()
    if not args.abidw or not args.abidiff:
        # scripts/test installs abigail-tools and sets RPCD_REQUIRE_TOOLCHAINS: CI never skips.
        print('abidw or abidiff not found (package abigail-tools)')
        return 1 if os.environ.get('RPCD_REQUIRE_TOOLCHAINS') == '1' else 77

    with tempfile.TemporaryDirectory() as work:
        fresh = os.path.join(work, 'fresh.abi')
        abidw(args, fresh)
        if args.update:
            with open(fresh) as source, open(args.baseline, 'w') as target:
                target.write(source.read())
            print('wrote %s' % args.baseline)
            return 0
        if architecture(fresh) != architecture(args.baseline):
            print('SKIP: the baseline is of %s, this build of %s' %
                  (architecture(args.baseline), architecture(fresh)))
            return 77
        status, report = abidiff(args, args.baseline, fresh)
        lost = members_lost(args.baseline, fresh)
        if lost:
            print('plugin ABI: no longer where the baseline has them (moved, renamed or removed): '
                  '%s\n%s' % (', '.join(lost), report))
            return 1
        if status == 0:
            print('plugin ABI: no change from %s' % os.path.basename(args.baseline))
            return 0
        if status & (ABIDIFF_ERROR | ABIDIFF_USAGE_ERROR):
            print('abidiff failed (status %d):\n%s' % (status, report))
            return 1
        if status & ABIDIFF_ABI_INCOMPATIBLE_CHANGE:
            # A probe function removed: a type left the header.
            print('plugin ABI: incompatible change (abidiff status %d):\n%s' % (status, report))
            return 1
        # ABIDIFF_ABI_CHANGE alone: abidiff gives it to an appended member as to a moved or
        # retyped one. Compared again without the appended members, only additions may remain.
        trimmed_file = os.path.join(work, 'trimmed.abi')
        appended = trim_appended(args.baseline, fresh, trimmed_file)
        trimmed_status, trimmed_report = abidiff(args, args.baseline, trimmed_file)
        if trimmed_status == 0 or (trimmed_status == ABIDIFF_ABI_CHANGE
                                   and only_additions(trimmed_report)):
            print('plugin ABI: additions only (appended: %s)\n%s' %
                  (', '.join(appended) or 'none', report))
            return 0
        print('plugin ABI: changed, not only by additions (abidiff status %d):\n%s' %
              (status, report))
        return 1


if __name__ == '__main__':
    sys.exit(main())
