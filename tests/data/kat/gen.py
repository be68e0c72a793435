#!/usr/bin/env python3
"""gen.py NEW_SIMHASH [OLD_SIMHASH] > fingerprints.tsv

Writes the known-answer table of tests/data/kat/: every text of TEXTS under
every option group of OPTIONS, with its scheme string and fingerprint.

The table pins fingerprints: regenerate it only to ADD rows, never to accept
a changed value. With OLD_SIMHASH (a build of the release before a change),
every row whose scheme is v1 is taken from the old build and must equal the
new one, so a new scheme version cannot move the old scheme's values.
Run from the repository root (the IDF and stop-word paths are relative).

Columns: options (command-line flags, '-' for none), scheme, text (escaped:
\\n \\t \\r \\\\ and \\xHH for any other byte below 0x20 or not valid
UTF-8), fingerprint (hex).
"""
import os
import subprocess
import sys
import tempfile

PARA_EN = ("Near-duplicate detection finds documents that are almost the same: a mail "
           "forwarded with a new signature, a web page with another banner, a report "
           "saved twice with one figure changed. SimHash turns each document into a short "
           "fingerprint so that similar documents get fingerprints that differ in few bits. ")
PARA_ZH = ("近似重复检测用于找出几乎相同的文档，例如转发时加了新签名的邮件、换了横幅的网页，"
           "或者只改了一个数字又保存了一次的报告。SimHash把每篇文档变成一个简短的指纹，"
           "相似的文档得到只差几位的指纹。")

TEXTS = [
    b"",                                                     # empty: one empty feature
    "中".encode(),                                            # one CJK character
    b"Hello, World!",                                        # shorter than most n-grams
    b"The quick brown fox jumps over the lazy dog.",         # short English
    "今天天气很好，我们一起去公园散步吧。".encode(),               # short Chinese
    "這是一個繁體中文的測試，電腦與網絡。".encode(),               # traditional: t2s folds it
    "Mixed 中文 and English 😀 𠮷野家 ＦＵＬＬ ｗｉｄｔｈ ①②③ Straße ﬁ ẞ".encode(),  # scripts, 4-byte, NFKC
    b"bad \xff\xfe bytes \xc3( end \xe4\xb8",                # invalid UTF-8: U+FFFD each
    b"<p>Hello <b>world</b> &amp; &#20013;&#25991; <script>x()</script></p>",  # HTML
    "哈哈哈哈哈哈 sooooo goooood !!!!!!".encode(),               # repeats
    "e\u0301 café CAFÉ Ǆ ǅ ǆ ﬀ".encode(),                    # combining marks, case folding
    b"line one\nline two\tTabbed\r\nline three",             # controls as spaces
    (PARA_EN * 2).encode(),                                  # ~ 600 chars: the v2 blend zone
    " ".join(PARA_EN.replace("fingerprint", "fingerprint %d" % i) for i in range(6)).encode(),  # ~ 1.8k chars: shingles
    (PARA_ZH * 9).encode(),                                  # ~ 1k CJK chars: shingles of characters
    "𠮷𠮷𠮷𠮷𠮷𠮷𠮷𠮷𠮷a中中中中中中中中中b 𪚥𪚥𪚥𪚥𪚥𪚥𪚥𪚥x".encode(),  # 4-byte Han runs
]

OPTIONS = [
    "-", "--bits 32", "--bits 128", "--no-t2s", "--html", "--features auto --no-casefold",
    "--features auto -n 4",
    # scheme v2 as first released (-cen1): centered char votes of short texts
    "--char-votes", "--bits 32 --char-votes", "--bits 128 --char-votes", "--no-t2s --char-votes",
    "--html --char-votes", "--features auto --no-casefold --char-votes",
    "--features auto -n 4 --char-votes",
    "--features char", "--features char --bits 32", "--features char --bits 128",
    "--features char -n 4", "--features char --ngram-cjk 1", "--features char -n 2 --ngram-cjk 2",
    "--features word", "--features word --tokenizer icu", "--features shingle -n 2",
    "--features shingle -n 3 --tokenizer icu", "--features shingle -n 3 --weight logtf --bits 128",
    "--weight binary", "--weight logtf", "--tf-cap 2", "--weight tfidf --idf tests/data/kat/idf.tsv",
    "--features word --stopwords tests/data/kat/stop.txt",
    "--hash fnv1", "--hash fnv1a --bits 128", "--hash fnv1a --bits 32", "--hash md5",
    "--hash md5 --bits 128",
    "--features char --no-t2s", "--features char --html", "--features char --no-casefold",
    "--features char --space collapse", "--features char --space drop", "--features char --punct keep",
    "--features char --max-repeat 2",
    "--compat python-simhash", "--compat python-simhash --bits 128",
]


def escape(b):
    out = []
    text = b.decode("utf-8", "surrogateescape")
    for ch in text:
        o = ord(ch)
        if ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif 0xDC80 <= o <= 0xDCFF:
            out.append("\\x%02x" % (o - 0xDC00))
        elif o < 0x20:
            out.append("\\x%02x" % o)
        else:
            out.append(ch)
    return "".join(out)


def run(binary, opts, files):
    args = [binary, "fingerprint", "-j", "1"] + ([] if opts == "-" else opts.split()) + files
    out = subprocess.run(args, check=True, capture_output=True).stdout.decode()
    return [line.split("\t")[0] for line in out.splitlines()]


def scheme(binary, opts):
    args = [binary, "scheme"] + ([] if opts == "-" else opts.split())
    return subprocess.run(args, check=True, capture_output=True).stdout.decode().strip()


def main():
    new = sys.argv[1]
    old = sys.argv[2] if len(sys.argv) > 2 else None
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for i, t in enumerate(TEXTS):
            path = os.path.join(tmp, "t%02d" % i)
            with open(path, "wb") as f:
                f.write(t)
            files.append(path)
        print("# Known-answer fingerprints: generated by gen.py, then frozen (see gen.py).")
        print("# options\tscheme\ttext\tfingerprint")
        for opts in OPTIONS:
            s = scheme(new, opts)
            got = run(new, opts, files)
            if old and s.startswith("v1/"):
                want = run(old, opts, files)
                if want != got or scheme(old, opts) != s:
                    sys.exit("gen.py: v1 values moved under %r" % opts)
            for t, h in zip(TEXTS, got):
                print("%s\t%s\t%s\t%s" % (opts, s, escape(t), h))


main()
