#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Print the verified-instruction table of Documentation/bpf.rst.

Reads the logs a `make test` leaves (build/test/vm-<release>.log from each
guest's test_bpf_sets, build/test/host.log from test_bpf_verify) and prints
one RST table: a row per program of the object, a column per kernel, the
verifier's count of processed instructions, or "not here" where the
program's tracepoint has no BTF on that kernel.

    scripts/bpf-insn-table.py [BUILD_TEST_DIR]      (default build/test)
"""
import os
import re
import sys

VM_LINE = re.compile(r'^# (verified|not here) on (\S+): (\S+)\s+\S+\s*(.*)$')
HOST_KERNEL = re.compile(r'^# host kernel (\S+)')
HOST_LINE = re.compile(r'^# (verified|not here) (\S+)\s+\S+\s*(.*)$')
COUNT = re.compile(r'(\d+) verified')


def short(release):
    """6.12.117+deb12-rt-amd64 -> 6.12.117-rt"""
    r = release.replace('+deb12', '')
    for tail in ('-amd64', '-arm64', '-drmacct'):
        if r.endswith(tail):
            r = r[: -len(tail)]
    return r


def value(kind, rest):
    if kind == 'not here':
        return 'not here'
    m = COUNT.search(rest)
    if not m:
        raise ValueError('no "N verified" in: ' + rest)
    return m.group(1)


def put(table, col, prog, v):
    cols, rows, order = table
    if col not in cols:
        cols.append(col)
    if prog not in rows:
        rows[prog] = {}
        order.append(prog)
    rows[prog][col] = v


def read_vm(path, table):
    with open(path, encoding='utf-8', errors='replace') as f:
        for line in f:
            m = VM_LINE.match(line.rstrip('\n'))
            if m:
                kind, rel, prog, rest = m.groups()
                put(table, short(rel), prog, value(kind, rest))


def read_host(path, table):
    col = None
    with open(path, encoding='utf-8', errors='replace') as f:
        for line in f:
            line = line.rstrip('\n')
            m = HOST_KERNEL.match(line)
            if m:
                col = 'host ' + short(m.group(1)).split('-')[0]
                continue
            m = HOST_LINE.match(line)
            if m and col is not None and m.group(2) != 'on':
                kind, prog, rest = m.groups()
                put(table, col, prog, value(kind, rest))


def main(argv):
    d = argv[1] if len(argv) > 1 else 'build/test'
    table = cols, rows, order = [], {}, []
    try:
        names = sorted(os.listdir(d))
    except OSError as e:
        sys.stderr.write('bpf-insn-table: %s: %s\n' % (d, e.strerror))
        return 1
    for n in names:
        if n.startswith('vm-') and n.endswith('.log'):
            read_vm(os.path.join(d, n), table)
    if 'host.log' in names:
        read_host(os.path.join(d, 'host.log'), table)
    if not order:
        sys.stderr.write('bpf-insn-table: no "verified" lines in %s/vm-*.log or host.log '
                         '(run make test first)\n' % d)
        return 1
    head = ['program'] + cols
    body = [['``%s``' % p] + [rows[p].get(c, '--') for c in cols] for p in order]
    width = [max(len(r[i]) for r in [head] + body) for i in range(len(head))]
    rule = '  '.join('=' * w for w in width)
    fmt = lambda r: '  '.join(v.ljust(w) for v, w in zip(r, width)).rstrip()
    print(rule)
    print(fmt(head))
    print(rule)
    for r in body:
        print(fmt(r))
    print(rule)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
