#!/usr/bin/env python3
# peers.py: hmmlearn's GMMHMM (full covariances) on seed paper 003's model
# as gmm-bench made it (--write-params, --write-npz): the same gaussians,
# weights and frames, scored with one utterance per worker process over the
# host's cores; its 1/RTF at 100 frames/s. hmmlearn has no end state, so its
# transitions are gmm-bench's renormalised without the exit: the work is
# the same, the numbers are not compared. Skips, with a line saying why,
# where hmmlearn is absent. pomegranate and dynamax are not run yet (their
# mixtures of full-covariance gaussians in an HMM were not set up here).
#   peers.py PARAMS FRAMES.npy S G D U [--utterances N] [--length L]
import argparse
import multiprocessing as mp
import os
import sys
import time

import numpy as np

MODEL = {}


def score_one(bounds):
    a, b = bounds
    return MODEL["hmm"].score(MODEL["x"][a:b])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("params")
    ap.add_argument("frames")
    ap.add_argument("S", type=int)
    ap.add_argument("G", type=int)
    ap.add_argument("D", type=int)
    ap.add_argument("U", type=int)
    ap.add_argument("--utterances", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--length", type=int, default=200)
    a = ap.parse_args()
    try:
        from hmmlearn.hmm import GMMHMM
    except ImportError as e:
        print(f"PEER\thmmlearn\tskipped: {e}")
        return 0
    S, G, D = a.S, a.G, a.D
    raw = np.fromfile(a.params, dtype=np.float64)
    n_g = S * G
    mean = raw[: n_g * D].reshape(S, G, D)
    L = raw[n_g * D: n_g * D + n_g * D * D].reshape(S, G, D, D)
    logw = raw[n_g * D + n_g * D * D:].reshape(S, G)
    x = np.load(a.frames, mmap_mode="r")
    hmm = GMMHMM(n_components=S, n_mix=G, covariance_type="full", init_params="", params="")
    hmm.n_features = D
    hmm.startprob_ = np.full(S, 1.0 / S)
    t = np.zeros((S, S))
    for s in range(S):
        if s + 1 < S:
            t[s, s], t[s, s + 1] = 0.6 / 0.99, 0.39 / 0.99
        else:
            t[s, s] = 1.0
    hmm.transmat_ = t
    hmm.weights_ = np.exp(logw)
    hmm.means_ = mean
    hmm.covars_ = np.einsum("sgik,sgjk->sgij", L, L)
    n = min(a.utterances, len(x) // a.U)
    bounds = [(u * a.U, u * a.U + min(a.length, a.U)) for u in range(n)]
    MODEL["hmm"], MODEL["x"] = hmm, np.asarray(x[: bounds[-1][1]], dtype=np.float64)
    frames = sum(b - a_ for a_, b in bounds)
    t0 = time.perf_counter()
    with mp.get_context("fork").Pool(min(n, os.cpu_count() or 1)) as pool:
        scores = pool.map(score_one, bounds)
    wall = time.perf_counter() - t0
    print(f"PEER\thmmlearn\t{n} utterances of {bounds[0][1] - bounds[0][0]} frames ({frames} frames) "
          f"on {min(n, os.cpu_count() or 1)} processes: {wall:.2f} s, 1/RTF {frames / 100 / wall:.2f} "
          f"at 100 frames/s (first ln P {scores[0]:.4f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
