#!/usr/bin/env python3
# compare.py: the side-by-side table of one run-all: every timing row of
# OUTDIR/results.tsv, issue 23's targets (hmmc's EM iteration against the
# fastest GPU peer; posterior against forward+backward), and every fitted
# parameter set and E-step log-likelihood against hmmlearn's (float64).
#   compare.py OUTDIR
import glob
import json
import math
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import numpy as np  # noqa: E402

from hmmfile import read_hmm  # noqa: E402

GPU_PEERS = ("dynamax", "pomegranate")
# Float tolerance for a fitted probability: pomegranate's float32 logs land
# near 1e-5 from hmmlearn's float64 on these workloads, dynamax's near 1e-7.
TOLERANCE = 1e-4


def rows(outdir):
    out = []
    for line in open(os.path.join(outdir, "results.tsv")):
        f = line.rstrip("\n").split("\t")
        if len(f) >= 6 and f[0] in ("PEER", "HMMC"):
            sec = float(f[4]) if f[4] not in ("nan", "skipped", "failed") else math.nan
            ll = float(f[5]) if f[5] not in ("nan", "") else math.nan
            out.append({"wl": f[1], "prog": f[2], "what": f[3], "s": sec, "ll": ll,
                        "note": f[6] if len(f) > 6 else "", "status": f[4]})
    return out


def fits(outdir, wl, hmmc_ll):
    got = {}
    for path in sorted(glob.glob(os.path.join(outdir, f"{wl}-*-fit.json"))):
        d = json.load(open(path))
        got[d["peer"]] = {k: np.array(d[k]) for k in ("pi", "A", "B")}
        got[d["peer"]]["ll"] = d["loglik_start"]
    hmm = os.path.join(outdir, f"{wl}-hmmc-fit.hmm")
    if os.path.exists(hmm) and os.path.getsize(hmm) > 0:
        m = read_hmm(hmm, wl)
        got["hmmc"] = {"pi": m["pi"], "A": m["A"], "B": m["B"], "ll": hmmc_ll}
    return got


def main():
    outdir = sys.argv[1]
    R = rows(outdir)
    for wl in sorted({r["wl"] for r in R}, key=lambda w: [r["wl"] for r in R].index(w)):
        mine = [r for r in R if r["wl"] == wl]
        print(f"\n== {wl}")
        print(f"  {'program':<12} {'what':<46} {'seconds':>10} {'total log-likelihood':>22}")
        for r in mine:
            s = r["status"] if math.isnan(r["s"]) else f"{r['s']:.4f}"
            ll = "" if math.isnan(r["ll"]) else f"{r['ll']:.6f}"
            print(f"  {r['prog']:<12} {r['what'][:46]:<46} {s:>10} {ll:>22}")
        pick = lambda prog, what: next((r["s"] for r in mine if r["prog"] == prog and r["what"] == what
                                        and not math.isnan(r["s"])), math.nan)
        em = {p: pick(p, "em-iteration") for p in GPU_PEERS + ("hmmlearn",)}
        gpu = {p: s for p, s in em.items() if p in GPU_PEERS and not math.isnan(s)}
        h_em = pick("hmmc", "em-iteration")
        h_e = pick("hmmc", "first E-step (training's clock)")
        if gpu:
            best = min(gpu, key=gpu.get)
            ratio = gpu[best] / h_em if h_em == h_em else math.nan
            print(f"  target EM >= 10x the fastest GPU peer ({best}, {gpu[best]:.4f} s): "
                  + (f"hmmc {h_em:.4f} s process wall, {ratio:.1f}x: {'met' if ratio >= 10 else 'missed'}"
                     if ratio == ratio else "no hmmc EM figure"))
            if h_e == h_e:
                print(f"    by training's own clock (one E-step, 3 decimals): {h_e:.3f} s, "
                      + (f"{gpu[best] / h_e:.1f}x" if h_e > 0 else "under 0.0005 s"))
        post, fb = pick("hmmc", "posterior"), pick("hmmc", "forward+backward")
        if post == post and fb == fb:
            print(f"  target posterior <= 2x forward+backward (process wall): {post:.4f} / {fb:.4f} s = "
                  f"{post / fb:.2f}x: {'met' if post <= 2 * fb else 'missed'}")
        # hmmc's --timing GPU scoring wall leaves out opening the GPU and
        # reading the file, as the peers' figures (data already on the GPU) do.
        wall = lambda what: next((float(m.group(1)) for r in mine if r["prog"] == "hmmc" and r["what"] == what
                                  for m in [re.search(r"GPU scoring wall ([0-9.]+) s", r["note"])] if m), math.nan)
        spost, sfb = wall("posterior"), wall("forward+backward")
        if spost == spost and sfb == sfb:
            print(f"  target posterior <= 2x forward+backward (GPU scoring wall): {spost:.4f} / {sfb:.4f} s = "
                  f"{spost / sfb:.2f}x: {'met' if spost <= 2 * sfb else 'missed'}")
        dpost = pick("dynamax", "posterior")
        if post == post and dpost == dpost:
            print(f"  posterior: dynamax {dpost:.4f} s, hmmc {post:.4f} s process wall ({dpost / post:.2f}x)"
                  + (f", {spost:.4f} s GPU scoring wall ({dpost / spost:.2f}x)" if spost == spost else ""))
        F = fits(outdir, wl, next((r["ll"] for r in mine if r["prog"] == "hmmc"
                                   and r["what"] == "em-iteration"), math.nan))
        if not F:
            continue
        ref = "hmmlearn" if "hmmlearn" in F else next(iter(F))
        print(f"  fitted parameters after one iteration against {ref}'s (max |difference|):")
        for p, f in F.items():
            if p == ref:
                continue
            d = {k: float(np.max(np.abs(f[k] - F[ref][k]))) for k in ("pi", "A", "B")}
            rel = abs(f["ll"] - F[ref]["ll"]) / abs(F[ref]["ll"]) if f["ll"] == f["ll"] else math.nan
            ok = max(d.values()) <= TOLERANCE
            print(f"    {p:<12} pi {d['pi']:.2e}  A {d['A']:.2e}  B {d['B']:.2e}  "
                  f"E-step log-likelihood relative difference {rel:.2e}  "
                  f"{'within' if ok else 'OUTSIDE'} {TOLERANCE:g}")
        hll = next((r["ll"] for r in mine if r["prog"] == "hmmc" and r["what"] == "forward+backward"), math.nan)
        if hll == hll:
            print(f"  hmmc's total forward score {hll:.6f} against {ref}'s E-step log-likelihood "
                  f"{F[ref]['ll']:.6f}: relative difference {abs(hll - F[ref]['ll']) / abs(F[ref]['ll']):.2e}")


if __name__ == "__main__":
    main()
