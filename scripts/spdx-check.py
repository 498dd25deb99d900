#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""spdx-check.py - the licence rules of this tree, checked.

    spdx-check.py [-C ROOT] tree
        Every file of the tree names its licence with an SPDX-License-Identifier
        line in its first lines, or, when it cannot carry a comment (data,
        fuzz seeds), in a "Files:"/"License:" stanza of ROOT/.reuse/dep5.
        The expression must parse, and every licence and exception in it must
        have its text under ROOT/LICENSES/ (Valid-License-Identifier: and
        SPDX-Exception-Identifier: headers, as the kernel's LICENSES/ has them);
        an exception only with a licence its SPDX-Licenses: header names.
        The files are those git tracks when ROOT is a git checkout, else every
        file under ROOT but build/ (a release tarball).

    spdx-check.py [-C ROOT] link NAME LICENCE INPUT...
        The program or library NAME, distributed under LICENCE, is made from
        INPUTs: object files (their make depfile X.d beside X.o lists every
        source and header compiled into them), depfiles, sources (.c, .h)
        and -lLIB for a library linked dynamically. Fails when any of them cannot be part of
        a work under LICENCE: GPL-only code in an MIT library, say. A BPF
        skeleton (build/.../X.skel.h) counts as the sources of X.bpf.o, read
        from X.bpf.d beside it.

Exit status 0 when every check passed, 1 when one failed (each failure is
printed, one line each, naming the file), 2 on usage errors.
"""
import os
import re
import subprocess
import sys

SPDX_RE = re.compile(r'SPDX-License-Identifier:\s*(.*)$')
HEAD_LINES = 5          # the identifier must be within the first lines

# Licences by what they allow a work that contains or links them.
PERMISSIVE = {'MIT', 'BSD-2-Clause', 'BSD-3-Clause', 'ISC', 'Zlib', 'X11', '0BSD'}
# Code under these may become part of a GPL-2.0 work (LGPL-2.x: its section 3).
GPL2_COMPATIBLE = PERMISSIVE | {
    'GPL-2.0', 'GPL-2.0-only', 'GPL-2.0+', 'GPL-2.0-or-later',
    'LGPL-2.0', 'LGPL-2.0+', 'LGPL-2.0-or-later',
    'LGPL-2.1', 'LGPL-2.1-only', 'LGPL-2.1+', 'LGPL-2.1-or-later'}
# Libraries under these may be linked dynamically by a work under any licence.
LINKABLE_BY_ANY = PERMISSIVE | {
    'LGPL-2.0', 'LGPL-2.0+', 'LGPL-2.0-or-later', 'LGPL-2.1', 'LGPL-2.1-only',
    'LGPL-2.1+', 'LGPL-2.1-or-later', 'LGPL-3.0-only', 'LGPL-3.0-or-later'}

# What may go into a work distributed under each licence we distribute under.
INCLUDABLE = {
    'MIT': PERMISSIVE,
    'BSD-2-Clause': PERMISSIVE,
    'GPL-2.0': GPL2_COMPATIBLE,
    'GPL-2.0-only': GPL2_COMPATIBLE,
}

# The system libraries we link, by -l name, and their licences (Debian's
# copyright files of the -dev packages).
LIBRARIES = {
    'c': 'LGPL-2.1-or-later', 'm': 'LGPL-2.1-or-later',
    'pthread': 'LGPL-2.1-or-later', 'crypt': 'LGPL-2.1-or-later',
    'bpf': 'LGPL-2.1 OR BSD-2-Clause',
    'elf': 'GPL-2.0-or-later OR LGPL-3.0-or-later',
    'z': 'Zlib', 'drm': 'MIT', 'yaml': 'MIT',
    'microhttpd': 'LGPL-2.1-or-later', 'gnutls': 'LGPL-2.1-or-later',
    'traceevent': 'LGPL-2.1-only',
    'ncursesw': 'X11', 'tinfo': 'X11',
}


class Failure(Exception):
    pass


STALE = set()               # files depfiles name that are gone


# ---- SPDX expressions ------------------------------------------------------

def tokens(expr):
    out = []
    for tok in re.findall(r'\(|\)|[^\s()]+', expr):
        out.append(tok)
    return out


def parse(expr):
    """The expression as a list of alternatives, each a list of
    (licence, exception-or-None) that must all hold: OR of ANDs."""
    toks = tokens(expr)
    pos = 0

    def peek():
        return toks[pos] if pos < len(toks) else None

    def take():
        nonlocal pos
        if pos >= len(toks):
            raise Failure('expression ends too early')
        pos += 1
        return toks[pos - 1]

    def primary():
        tok = take()
        if tok == '(':
            v = or_expr()
            if take() != ')':
                raise Failure("')' expected")
            return v
        if tok in ('AND', 'OR', 'WITH', ')'):
            raise Failure("'%s' where a licence was expected" % tok)
        if not re.fullmatch(r'[A-Za-z0-9.+-]+', tok):
            raise Failure("'%s' is not a licence identifier" % tok)
        exc = None
        if peek() == 'WITH':
            take()
            exc = take()
            if not re.fullmatch(r'[A-Za-z0-9.+-]+', exc):
                raise Failure("'%s' is not an exception identifier" % exc)
        return [[(tok, exc)]]

    def and_expr():
        v = primary()
        while peek() == 'AND':
            take()
            r = primary()
            v = [a + b for a in v for b in r]
        return v

    def or_expr():
        v = and_expr()
        while peek() == 'OR':
            take()
            v = v + and_expr()
        return v

    if not toks:
        raise Failure('empty expression')
    v = or_expr()
    if pos != len(toks):
        raise Failure("'%s' after the end of the expression" % toks[pos])
    return v


def clean(raw):
    """The expression of an identifier line, without comment closers."""
    raw = raw.strip()
    for end in ('*/', '-->', '#}'):
        if raw.endswith(end):
            raw = raw[:-len(end)].strip()
    return raw


# ---- the LICENSES directory --------------------------------------------------

def load_licenses(root):
    lic, exc = set(), {}
    base = os.path.join(root, 'LICENSES')
    if not os.path.isdir(base):
        raise Failure('%s: no such directory' % base)
    for dirpath, _, files in os.walk(base):
        for f in files:
            path = os.path.join(dirpath, f)
            ids, eid, allowed = [], None, []
            with open(path, encoding='utf-8') as fh:
                for line in fh:
                    if line.startswith('License-Text:'):
                        break
                    k, _, v = line.partition(':')
                    v = v.strip()
                    if k == 'Valid-License-Identifier':
                        ids.append(v)
                    elif k == 'SPDX-Exception-Identifier':
                        eid = v
                    elif k == 'SPDX-Licenses':
                        allowed = [x.strip() for x in v.split(',')]
            if not ids and not eid:
                raise Failure('%s: names no licence (Valid-License-Identifier:)'
                              % os.path.relpath(path, root))
            lic.update(ids)
            if eid:
                exc[eid] = set(allowed)
    return lic, exc


# ---- tree ----------------------------------------------------------------------

def tree_files(root):
    if os.path.exists(os.path.join(root, '.git')):
        out = subprocess.run(['git', '-C', root, 'ls-files', '-z'], check=True,
                             stdout=subprocess.PIPE).stdout.decode()
        return sorted(f for f in out.split('\0') if f)
    files = []
    for dirpath, dirs, names in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        if rel == '.':
            dirs[:] = [d for d in dirs if d not in ('build', '.git')]
        for n in names:
            files.append(os.path.normpath(os.path.join(rel, n)))
    return sorted(files)


def load_dep5(root):
    """[(glob regex, expression)] from .reuse/dep5, in file order."""
    path = os.path.join(root, '.reuse', 'dep5')
    stanzas = []
    if not os.path.exists(path):
        return stanzas
    with open(path, encoding='utf-8') as fh:
        text = fh.read()
    for block in re.split(r'\n\s*\n', text):
        fields, key = {}, None
        for line in block.splitlines():
            if line.startswith('#'):
                continue
            if line[:1] in (' ', '\t') and key:
                fields[key] += ' ' + line.strip()
                continue
            key, _, v = line.partition(':')
            fields[key] = v.strip()
        if 'Files' in fields:
            if 'License' not in fields:
                raise Failure('.reuse/dep5: Files: %s without License:' % fields['Files'])
            for g in fields['Files'].split():
                rx = re.escape(g).replace(r'\*', '[^/]*').replace(r'\?', '[^/]')
                stanzas.append((re.compile(rx + '$'), fields['License'], g))
    return stanzas


def file_expression(root, rel):
    try:
        with open(os.path.join(root, rel), 'rb') as fh:
            head = fh.read(4096)
    except OSError as e:
        raise Failure('%s: %s' % (rel, e.strerror))
    for line in head.split(b'\n')[:HEAD_LINES]:
        m = SPDX_RE.search(line.decode('utf-8', 'replace'))
        if m:
            return clean(m.group(1))
    return None


def check_expression(expr, lic, exc):
    for alt in parse(expr):
        for l, e in alt:
            if l not in lic:
                raise Failure("licence '%s' has no text under LICENSES/" % l)
            if e is not None:
                if e not in exc:
                    raise Failure("exception '%s' has no text under LICENSES/" % e)
                if l not in exc[e]:
                    raise Failure("exception '%s' is not for '%s'" % (e, l))


def cmd_tree(root):
    lic, exc = load_licenses(root)
    dep5 = load_dep5(root)
    used = set()
    bad = 0
    files = tree_files(root)
    for rel in files:
        if rel.startswith('LICENSES/') or rel in ('COPYING', '.reuse/dep5', '.tarball-version'):
            continue
        expr = file_expression(root, rel)
        where = 'line'
        if expr is None:
            for rx, e, g in dep5:
                if rx.match(rel):
                    expr, where = e, '.reuse/dep5'
                    used.add(g)
                    break
        if expr is None:
            print('%s: no SPDX-License-Identifier in its first %d lines' % (rel, HEAD_LINES))
            bad += 1
            continue
        try:
            check_expression(expr, lic, exc)
        except Failure as f:
            print('%s: %s: %s (%s)' % (rel, expr, f, where))
            bad += 1
    for rx, e, g in dep5:
        if g not in used:
            print('.reuse/dep5: Files: %s matches no file' % g)
            bad += 1
    print('spdx-check: %d files, %d without a valid licence' % (len(files), bad))
    return 1 if bad else 0


# ---- link ----------------------------------------------------------------------

def depfile_deps(path):
    """The prerequisites of the first rule of a make depfile."""
    with open(path, encoding='utf-8') as fh:
        text = fh.read().replace('\\\n', ' ')
    for line in text.splitlines():
        if ':' in line:
            return line.split(':', 1)[1].split()
    raise Failure('%s: no rule in this depfile' % path)


def sources_of(root, inp, seen):
    """The repository files compiled into @inp (an object or a depfile)."""
    d = inp[:-2] + '.d' if inp.endswith('.o') else inp
    d = os.path.join(root, d)     # relative to the tree, as make gives them
    if not os.path.exists(d):
        raise Failure('%s: no depfile %s to tell its sources'
                      % (inp, os.path.relpath(d, root)))
    out = []
    for dep in depfile_deps(d):
        full = os.path.normpath(dep if os.path.isabs(dep) else os.path.join(root, dep))
        rel = os.path.relpath(full, root)
        if rel.startswith('..'):
            continue            # a system header: its library is -l'ed
        if rel in seen:
            continue
        seen.add(rel)
        if rel.startswith('build/') and rel.endswith('.skel.h'):
            bpf_d = rel[:-len('.skel.h')] + '.bpf.d'
            out += sources_of(root, os.path.join(root, bpf_d), seen)
            continue
        if not os.path.exists(full):
            # a depfile of an older build, naming a file since moved or
            # removed: not in the tree, so not in a fresh build either
            STALE.add(rel)
            continue
        if rel.startswith('build/'):
            raise Failure('%s: generated file %s: cannot tell what it was made from'
                          % (inp, rel))
        out.append(rel)
    return out


def allowed(expr, ok):
    """Can code under @expr be used as one of the licences @ok?"""
    return any(all(l in ok for l, _ in alt) for alt in parse(expr))


def cmd_link(root, name, licence, inputs):
    if licence not in INCLUDABLE:
        raise Failure("%s: no rule for works under '%s'" % (name, licence))
    lic, exc = load_licenses(root)
    ok = INCLUDABLE[licence]
    bad = 0
    seen = set()
    nsrc = 0
    for inp in inputs:
        if inp.startswith('-l'):
            lib = inp[2:]
            if lib not in LIBRARIES:
                print("%s: library -l%s: its licence is not known to spdx-check" % (name, lib))
                bad += 1
                continue
            expr = LIBRARIES[lib]
            if not allowed(expr, LINKABLE_BY_ANY) and not allowed(expr, ok):
                print('%s (%s): links -l%s (%s)' % (name, licence, lib, expr))
                bad += 1
            continue
        if re.search(r'\.(c|h|S)$', inp):
            rel = os.path.relpath(os.path.join(root, inp), root)
            srcs = [] if rel in seen else [rel]
            seen.add(rel)
        else:
            srcs = sources_of(root, inp, seen)
        for rel in srcs:
            nsrc += 1
            expr = file_expression(root, rel)
            if expr is None:
                print('%s (%s): %s has no SPDX-License-Identifier' % (name, licence, rel))
                bad += 1
                continue
            check_expression(expr, lic, exc)
            if not allowed(expr, ok):
                print('%s (%s): contains %s (%s)' % (name, licence, rel, expr))
                bad += 1
    print('spdx-check: %s (%s): %d sources, %d not allowed%s'
          % (name, licence, nsrc, bad,
             ', %d stale depfile entries skipped (rebuild to refresh)' % len(STALE)
             if STALE else ''))
    return 1 if bad else 0


def main(argv):
    root = '.'
    if len(argv) >= 2 and argv[0] == '-C':
        root, argv = argv[1], argv[2:]
    try:
        if argv == ['tree']:
            return cmd_tree(root)
        if len(argv) >= 3 and argv[0] == 'link':
            return cmd_link(root, argv[1], argv[2], argv[3:])
    except Failure as f:
        print('spdx-check: %s' % f)
        return 1
    sys.stderr.write(__doc__.split('\n\n')[1] + '\n')
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
