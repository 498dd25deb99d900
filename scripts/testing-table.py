#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Print the results table of Documentation/testing.rst.

Reads the logs a `make test` leaves in build/test/ and prints one RST table:
a row per part (the VM suite of each kernel with its tep-check, the VM
runner's own tests, the host tests with the harness, packaging and fuzz
logs), with its passed, failed and skipped counts as selftests/tap-summary.sh
counts them (so the skips are those the expected-skip list allowed), and the
part's wall time from its timing file. Then one line per kernel naming the
programs whose tests skipped there.

    scripts/testing-table.py [BUILD_TEST_DIR]      (default build/test)
"""
import glob
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SUMMARY = os.path.join(HERE, '..', 'selftests', 'tap-summary.sh')
LAST = re.compile(r'^(\d+) passed, (\d+) failed, (\d+) skipped')
SKIP = re.compile(r'^ok \d+ (\S+): (.*?)\s*# *SKIP')
BEGIN = re.compile(r'^# drmacct-vm: begin (\S+)')
TIMING = re.compile(r'^timing: .* (\d+) s$')


def counts(paths):
    """(passed, failed, skipped) of PATHS as tap-summary.sh counts them."""
    out = subprocess.run([SUMMARY] + paths, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True).stdout
    last = out.strip().splitlines()[-1] if out.strip() else ''
    m = LAST.match(last)
    if not m:
        raise ValueError('tap-summary.sh printed no summary for %s' % paths)
    return tuple(int(x) for x in m.groups())


def seconds(d, part):
    try:
        with open(os.path.join(d, 'timing-test-part-' + part), encoding='utf-8') as f:
            for line in f:
                m = TIMING.match(line.strip())
                if m:
                    return m.group(1) + ' s'
    except OSError:
        pass
    return '--'


def skipped_programs(path):
    """{program: count} of the skips in one VM log."""
    progs, cur = {}, None
    with open(path, encoding='utf-8', errors='replace') as f:
        for line in f:
            line = line.rstrip('\r\n')
            m = BEGIN.match(line)
            if m:
                cur = m.group(1).split('/', 1)[-1]
                continue
            if SKIP.match(line) and cur:
                progs[cur] = progs.get(cur, 0) + 1
    return progs


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else 'build/test'
    vms = sorted(glob.glob(os.path.join(d, 'vm-*.log')))
    if not vms:
        sys.stderr.write('testing-table: no VM logs in %s (run make test first)\n' % d)
        return 1
    rows = []
    used = set()
    for vm in vms:
        rel = os.path.basename(vm)[3:-4]
        files = [vm] + [p for p in [os.path.join(d, 'tep-%s.log' % rel)] if os.path.exists(p)]
        used.update(files)
        rows.append((rel + ' VM suite', counts(files), seconds(d, 'vm-' + rel)))
    runner = os.path.join(d, 'runner.log')
    if os.path.exists(runner):
        used.add(runner)
        rows.append(('VM runner self-tests', counts([runner]), seconds(d, 'runner')))
    host = sorted(p for p in glob.glob(os.path.join(d, '*.log')) if p not in used)
    if host:
        rows.append(('host tests, fuzzers', counts(host), seconds(d, 'host')))
    total = [sum(r[1][i] for r in rows) for i in range(3)]
    rows.append(('all', tuple(total), '--'))

    head = ('part', 'passed', 'failed', 'skipped', 'wall time')
    cells = [head] + [(n, str(c[0]), str(c[1]), str(c[2]), t) for n, c, t in rows]
    width = [max(len(r[i]) for r in cells) for i in range(len(head))]
    rule = '  '.join('=' * w for w in width)
    fmt = lambda r: '  '.join(v.ljust(w) for v, w in zip(r, width)).rstrip()
    print(rule)
    print(fmt(head))
    print(rule)
    for r in cells[1:]:
        print(fmt(r))
    print(rule)
    print()
    for vm in vms:
        rel = os.path.basename(vm)[3:-4]
        progs = skipped_programs(vm)
        what = ', '.join('``%s`` %d' % (p, n) for p, n in sorted(progs.items())) or 'none'
        print('- %s skips: %s' % (rel, what))
    return 0


if __name__ == '__main__':
    sys.exit(main())
