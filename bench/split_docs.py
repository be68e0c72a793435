#!/usr/bin/env python3
"""split_docs.py JSONL DIR - write the text of each record of JSONL as its own
file DIR/NNNNNN.txt (one document per file: what the per-core speed targets
time), and print the total number of text bytes written.

Texts are encoded as UTF-8 with 'surrogatepass', so a lone surrogate escaped
in the JSON keeps its bytes rather than stopping the run (the benchmark wants
the corpus's bytes, whatever they are). Names are record numbers, not ids: an
id may hold any character."""
import json, os, sys


def main():
    src, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    total = 0
    with open(src, encoding='utf-8') as f:
        for i, line in enumerate(f):
            if not line.strip():
                continue
            data = json.loads(line)['text'].encode('utf-8', 'surrogatepass')
            with open(os.path.join(out, '%06d.txt' % i), 'wb') as g:
                g.write(data)
            total += len(data)
    print(total)


if __name__ == '__main__':
    main()
