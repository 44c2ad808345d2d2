#!/usr/bin/env python3
"""Independent check of the numbers asserted in processor/regions/*_test.cc and
quoted in docs/regions.md, computed straight from the raw peer samples with
no code shared with the C++ parsers. Run from this directory:

    python3 verify_peer_samples.py
"""
from collections import Counter


def hexaddr(text):
    return int(text.replace('`', ''), 16)


def windbg_rows(path='windbg-address.output'):
    rows = []  # (start, end, words after the three addresses, line)
    with open(path, newline='') as f:
        for n, line in enumerate(f, 1):
            t = line.rstrip('\r\n').lstrip('+').split()
            if n <= 2 or not t:
                continue
            start, end, size = hexaddr(t[0]), hexaddr(t[1]), hexaddr(t[2])
            assert end - start == size, n
            rows.append((start, end, t[3:], n))
    return rows


def sos_rows(path='sos-maddress.output'):
    rows = []  # (start, end, cells, line)
    with open(path, newline='') as f:
        for n, line in enumerate(f, 1):
            cells = [c.strip() for c in line.rstrip('\r\n').split('|')]
            if len(cells) != 10 or cells[2] == 'StartAddr':
                continue
            rows.append((int(cells[2], 16), int(cells[3], 16), cells[1:-1], n))
    return rows


def merged(ranges):
    out = []
    for a, b in sorted(ranges):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def uncovered(a, b, cover):
    out, cur = [], a
    for x, y in cover:
        if y <= cur:
            continue
        if x >= b:
            break
        if x > cur:
            out.append((cur, min(x, b)))
        cur = max(cur, y)
        if cur >= b:
            break
    if cur < b:
        out.append((cur, b))
    return out


W, S = windbg_rows(), sos_rows()
Wc = [w for w in W if 'MEM_COMMIT' in w[2]]
Sc = [s for s in S if s[2][5] == 'MEM_COMMIT']
print('windbg rows', len(W), 'committed', len(Wc), 'bytes', sum(w[1] - w[0] for w in Wc))
print('sos rows', len(S), 'states', Counter(s[2][5] for s in S),
      'committed bytes', sum(s[1] - s[0] for s in Sc))

sos_starts = set(s[0] for s in S)
seed = [w for w in Wc if w[0] not in sos_starts]
print('seed rule unaccounted', len(seed), sum(w[1] - w[0] for w in seed))

sos_cover = merged((s[0], s[1]) for s in S if s[2][5] not in ('', 'MEM_FREE'))
pieces = [(p, w[3]) for w in Wc for p in uncovered(w[0], w[1], sos_cover)]
print('page-exact unaccounted', len(pieces), sum(b - a for (a, b), _ in pieces))
for (a, b), line in sorted(pieces, key=lambda x: (-(x[0][1] - x[0][0]), x[0][0])):
    print('   %x-%x %d windbg line %d' % (a, b, b - a, line))

windbg_cover = merged((w[0], w[1]) for w in Wc)
rpieces = [(p, s) for s in Sc for p in uncovered(s[0], s[1], windbg_cover)]
print('page-exact runtime-only', len(rpieces), sum(b - a for (a, b), _ in rpieces),
      Counter(s[2][0] for _, s in rpieces))
windbg_starts = set(w[0] for w in W)
print('seed rule runtime-only', sum(1 for s in Sc if s[0] not in windbg_starts))

pmap = [l.split() for l in open('pmap-XX.output')][1:]
print('pmap rows', len(pmap), 'KiB', sum(int(r[5]) for r in pmap))
