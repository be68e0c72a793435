#!/usr/bin/env python3
"""quality_table.py CONFIGS JSONDIR - the markdown report of quality.sh.

CONFIGS holds NAME|OPTIONS|SCHEME lines; JSONDIR holds NAME.SET.json, the
`score.py --json` output of each configuration on each set (SET: natural@T for
the natural set at Jaccard threshold T, short_zh, short_en). Prints:
  1. best F1 and its k for each configuration and set;
  2. the precision and recall at those best points;
  3. the per-k rows (k = 0..KMAX) of `default` and `shingle3-logtf`.
Python 3 standard library only, like score.py."""
import json, os, sys

SETS = [('natural@0.8', 'natural J>=0.8'), ('natural@0.5', 'natural J>=0.5'),
        ('natural@0.9', 'natural J>=0.9'), ('short_zh', 'short_zh'), ('short_en', 'short_en')]
PER_K = ['default', 'shingle3-logtf']


def fmt(x):
    return '-' if x is None else '%.3f' % x


def main():
    configs = []
    with open(sys.argv[1], encoding='utf-8') as f:
        for line in f:
            name, opts, scheme = line.rstrip('\n').split('|')
            configs.append((name, opts, scheme))
    res = {}
    for name, _, _ in configs:
        for s, _ in SETS:
            with open(os.path.join(sys.argv[2], '%s.%s.json' % (name, s)), encoding='utf-8') as f:
                res[name, s] = json.load(f)

    print('## Best F1 (and the k where it is reached)\n')
    print('| config | options | ' + ' | '.join(t for _, t in SETS) + ' |')
    print('| --- | --- |' + ' --- |' * len(SETS))
    for name, opts, _ in configs:
        cells = ['%.3f (k=%d)' % (res[name, s]['best']['f1'], res[name, s]['best']['k']) for s, _ in SETS]
        print('| %s | `%s` | %s |' % (name, opts or '(defaults)', ' | '.join(cells)))

    print('\n## Precision and recall at the best F1\n')
    print('| config | ' + ' | '.join('%s P / R' % t for _, t in SETS) + ' |')
    print('| --- |' + ' --- |' * len(SETS))
    for name, _, _ in configs:
        cells = ['%s / %s' % (fmt(res[name, s]['best']['precision']), fmt(res[name, s]['best']['recall']))
                 for s, _ in SETS]
        print('| %s | %s |' % (name, ' | '.join(cells)))

    print('\n## Schemes\n')
    for name, _, scheme in configs:
        print('- %s: `%s`' % (name, scheme))

    for name in PER_K:
        if (name, SETS[0][0]) not in res:
            continue
        for s, title in SETS:
            r = res[name, s]
            print('\n## %s, %s: every k\n' % (name, title))
            print('%d texts, %d true pairs.\n' % (r['texts'], r['truth_pairs']))
            print('| k | predicted | TP | precision | recall | F1 |')
            print('| ---: | ---: | ---: | ---: | ---: | ---: |')
            for row in r['rows']:
                print('| %d | %d | %d | %s | %s | %.3f |' % (row['k'], row['predicted'], row['tp'],
                      fmt(row['precision']), fmt(row['recall']), row['f1']))


if __name__ == '__main__':
    main()
