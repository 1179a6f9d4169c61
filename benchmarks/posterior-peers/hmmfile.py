# hmmfile.py: reads and writes the plain HMMs these benchmarks share with the
# peers: one `hmm` block, silent start and end, emitting states, every emitting
# state with `X -> end 1 fixed;` so that hmmc's P(x) is the peers' likelihood.
# Parameters come back as pi (start row), A (emitting x emitting), B (state x symbol).
import re
from fractions import Fraction

import numpy as np


def _num(text):
    text = text.strip()
    if "/" in text:
        return float(Fraction(text))
    return float(text)


def read_hmm(path, name=None):
    """pi, A, B, alphabet, states of the first (or the named) hmm block in PATH."""
    src = open(path).read()
    src = re.sub(r"//[^\n]*", "", src)
    blocks = re.findall(r"hmm\s+(\w+)\s*\{(.*?)\n\}", src, re.S)
    if not blocks:
        raise SystemExit(f"{path}: no hmm block found")
    body = None
    for bname, bbody in blocks:
        if name is None or bname == name:
            body = bbody
            break
    if body is None:
        raise SystemExit(f"{path}: no hmm block named {name}")
    alphabet = [s.strip().strip("'\"") for s in
                re.search(r"alphabet\s*\[(.*?)\]\s*;", body, re.S).group(1).split(",")]
    start = re.search(r"startstate\s+(\w+)\s*;", body).group(1)
    end = re.search(r"endstate\s+(\w+)\s*;", body).group(1)
    states, emits_of = [], {}
    for st, em in re.findall(r"\bstate\s+(\w+)\s+emits\s+(\w+)\s*;", body):
        states.append(st)
        emits_of[st] = em
    tables = {}
    for em, vals in re.findall(r"emission\s+(\w+)\s*=\s*\[(.*?)\]\s*(?:fixed\s*)?;", body, re.S):
        tables[em] = [_num(v) for v in vals.split(",")]
    idx = {s: i for i, s in enumerate(states)}
    k = len(states)
    pi, A, ends = np.zeros(k), np.zeros((k, k)), np.zeros(k)
    for a, b, w in re.findall(r"(\w+)\s*->\s*(\w+)\s+([^\s;]+)(?:\s+fixed)?\s*;", body):
        w = _num(w)
        if a == start:
            pi[idx[b]] = w
        elif b == end:
            ends[idx[a]] = w
        else:
            A[idx[a], idx[b]] = w
    B = np.array([tables[emits_of[s]] for s in states])
    return {"pi": pi, "A": A, "B": B, "ends": ends,
            "alphabet": alphabet, "states": states}


def write_hmm(path, name, alphabet, states, pi, A, B, fixed, comment, main):
    """The model as .hmm source: start -> each state pi, A between emitting
    states, every state -> end 1 (`fixed` when FIXED, for training: the end
    moves then stay out of each state's re-estimated row), one emission table
    per state."""
    fmt = lambda x: repr(float(x))
    out = ["// " + line for line in comment.splitlines()]
    out.append(f"hmm {name} {{")
    out.append("    alphabet [" + ", ".join(alphabet) + "];")
    out.append("    startstate start;")
    for s in states:
        out.append(f"    state {s} emits e_{s};")
    out.append("    endstate end;")
    for s, row in zip(states, B):
        out.append(f"    emission e_{s} = [" + ", ".join(fmt(v) for v in row) + "];")
    for s, p in zip(states, pi):
        if p > 0:
            out.append(f"    start -> {s} {fmt(p)};")
    for i, s in enumerate(states):
        for j, t in enumerate(states):
            if A[i, j] > 0:
                out.append(f"    {s} -> {t} {fmt(A[i, j])};")
        out.append(f"    {s} -> end 1{' fixed' if fixed else ''};")
    out.append("}")
    out.append("")
    out.append(main)
    open(path, "w").write("\n".join(out) + "\n")


def read_fasta(path, alphabet):
    """All sequences of PATH as one int8 array (n, L); every sequence must
    have the same length (the peers batch them)."""
    lookup = np.full(256, -1, dtype=np.int16)
    for i, s in enumerate(alphabet):
        if len(s) != 1:
            raise SystemExit(f"{path}: symbol {s!r} is not one character")
        lookup[ord(s)] = i
    seqs, cur = [], []
    with open(path, "rb") as f:
        for line in f:
            if line.startswith(b">"):
                if cur:
                    seqs.append(b"".join(cur))
                cur = []
            else:
                cur.append(line.strip())
    if cur:
        seqs.append(b"".join(cur))
    lengths = {len(s) for s in seqs}
    if len(lengths) != 1:
        raise SystemExit(f"{path}: sequences of different lengths {sorted(lengths)[:5]}")
    X = lookup[np.frombuffer(b"".join(seqs), dtype=np.uint8)].reshape(len(seqs), -1)
    if (X < 0).any():
        n, p = np.argwhere(X < 0)[0]
        raise SystemExit(f"{path}: sequence {n + 1} position {p + 1}: symbol outside the alphabet")
    return X.astype(np.int8)
