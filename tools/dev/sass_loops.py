#!/usr/bin/env python3
"""Loops of one kernel in an nvdisasm listing (tools/dev/sass_local.sh) and their instruction mix.

    sass_loops.py OUT.sass KERNEL [MIN_INSTRS]

A loop is a backward branch (BRA to an earlier label); its body is every instruction between the
label and the branch, so inner loops and rarely taken paths (exact fallbacks, masks) count in the
outer loop's static mix: read it as what the body contains, not as what one iteration issues.
Also lists the kernel's local-memory spills (STL / LDL) with the source line they are attributed to.
"""
import collections
import re
import sys


def kernel_lines(path, name):
    out, on = [], False
    for ln in open(path):
        if ln.startswith('//----'):
            on = ('.text.' + name + ' ') in ln
            continue
        if on:
            out.append(ln.rstrip('\n'))
    return out


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    lines = kernel_lines(sys.argv[1], sys.argv[2])
    minn = int(sys.argv[3]) if len(sys.argv) > 3 else 200
    if not lines:
        sys.exit('sass_loops: no kernel %s in %s' % (sys.argv[2], sys.argv[1]))
    ins, labels, pend, where = [], {}, [], ''
    spills = []
    for ln in lines:
        m = re.match(r'\s*(\.L_x_\d+):', ln)
        if m:
            pend.append(m.group(1))
            continue
        m = re.match(r'\s*//## File "(.*)", line (\d+)', ln)
        if m:
            where = '%s:%s' % (m.group(1).split('/')[-1], m.group(2))
            continue
        m = re.match(r'\s*/\*([0-9a-f]+)\*/\s+(.*?);', ln)
        if m:
            a = int(m.group(1), 16)
            for p in pend:
                labels[p] = a
            pend = []
            ins.append((a, m.group(2).strip()))
            if re.search(r'\b(STL|LDL)\b', m.group(2)):
                spills.append((a, m.group(2).strip(), where))
    print('%s: %d instructions' % (sys.argv[2], len(ins)))
    for a, t in ins:
        m = re.search(r'BRA.*?(\.L_x_\d+)', t)
        if not m or labels.get(m.group(1), 1 << 62) >= a:
            continue
        body = [x for x in ins if labels[m.group(1)] <= x[0] <= a]
        if len(body) < minn:
            continue
        mix = collections.Counter(re.sub(r'^@!?U?P\w+\s+', '', x[1]).split()[0].split('.')[0] for x in body)
        print('loop 0x%x..0x%x: %d instructions' % (labels[m.group(1)], a, len(body)))
        print('   ' + ', '.join('%s %d' % kv for kv in mix.most_common(30)))
    print('spills: %d' % len(spills))
    for a, t, w in spills:
        print('   0x%x  %-28s %s' % (a, t, w))


if __name__ == '__main__':
    main()
