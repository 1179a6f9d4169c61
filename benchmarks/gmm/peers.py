#!/usr/bin/env python3
# peers.py: one peer on seed paper 003's model as gmm-bench made it
# (--write-params, --write-npz: the same gaussians, weights and frames):
# hmmlearn's GMMHMM (full covariances) on the host's cores, one utterance a
# worker process; pomegranate's DenseHMM over GeneralMixtureModels of
# full-covariance Normals (PyTorch, on the GPU); dynamax's GaussianMixtureHMM
# (full covariances, JAX on the GPU). Each scores a subset of the frames (N
# utterances of their first L frames: every peer takes seconds to minutes a
# few hundred frames at this size) and its 1/RTF at 100 frames/s is per
# frame, so it scales linearly to 10^6 frames (the line says so); a peer's
# own setup (its model's construction, JAX's compilation: a warm-up run of
# the same shapes) is left out of its time. hmmlearn and dynamax have no end
# state: their transitions are gmm-bench's renormalised without the exit
# (the work is the same; their ln P differs from hmmc's by that). Prints one
# PEER line; "skipped: why" where the package (or a GPU) is absent.
#   peers.py PEER PARAMS FRAMES.npy S G D U [--utterances N] [--length L]
import argparse
import multiprocessing as mp
import os
import sys
import time

import numpy as np

MODEL = {}


def load(a):
    S, G, D = a.S, a.G, a.D
    raw = np.fromfile(a.params, dtype=np.float64)
    n_g = S * G
    mean = raw[: n_g * D].reshape(S, G, D)
    L = raw[n_g * D: n_g * D + n_g * D * D].reshape(S, G, D, D)
    logw = raw[n_g * D + n_g * D * D:].reshape(S, G)
    x = np.load(a.frames, mmap_mode="r")
    n = max(1, min(a.utterances, len(x) // a.U))
    length = min(a.length, a.U)
    batch = np.stack([np.asarray(x[u * a.U: u * a.U + length], dtype=np.float64) for u in range(n)])
    covs = np.einsum("sgik,sgjk->sgij", L, L)
    # gmm-bench's moves: loop 0.6, on 0.39, end 0.01 (the last state: loop 0.99)
    t = np.zeros((S, S))
    for s in range(S):
        if s + 1 < S:
            t[s, s], t[s, s + 1] = 0.6, 0.39
        else:
            t[s, s] = 0.99
    return mean, covs, np.exp(logw), t, batch


def line(peer, how, batch, wall, first):
    n, length = batch.shape[0], batch.shape[1]
    frames = n * length
    print(f"PEER\t{peer}\t{how}: {n} utterances of {length} frames ({frames} frames, a subset: "
          f"1/RTF is per frame, scaling linearly to 10^6 frames): {wall:.2f} s, 1/RTF "
          f"{frames / 100 / wall:.2f} at 100 frames/s (first ln P {first:.4f})", flush=True)


def hmm_score(u):
    return MODEL["hmm"].score(MODEL["x"][u])


def run_hmmlearn(a):
    from hmmlearn.hmm import GMMHMM
    mean, covs, w, t, batch = load(a)
    S = a.S
    hmm = GMMHMM(n_components=S, n_mix=a.G, covariance_type="full", init_params="", params="",
                 implementation="scaling")
    hmm.n_features = a.D
    hmm.startprob_ = np.full(S, 1.0 / S)
    hmm.transmat_ = t / t.sum(axis=1, keepdims=True)
    hmm.weights_ = w
    hmm.means_ = mean
    hmm.covars_ = covs
    MODEL["hmm"], MODEL["x"] = hmm, batch
    procs = min(len(batch), os.cpu_count() or 1)
    t0 = time.perf_counter()
    with mp.get_context("fork").Pool(procs) as pool:
        scores = pool.map(hmm_score, range(len(batch)))
    line("hmmlearn", f"GMMHMM full, scaling, {procs} processes on the host", batch,
         time.perf_counter() - t0, scores[0])


def run_pomegranate(a):
    import torch
    from pomegranate.distributions import Normal
    from pomegranate.gmm import GeneralMixtureModel
    from pomegranate.hmm import DenseHMM
    if not torch.cuda.is_available():
        print("PEER\tpomegranate\tskipped: PyTorch sees no GPU")
        return
    mean, covs, w, t, batch = load(a)
    S = a.S
    f32 = lambda v: torch.tensor(v, dtype=torch.float32)
    dists = [GeneralMixtureModel([Normal(f32(mean[s, g]), f32(covs[s, g]), covariance_type="full")
                                  for g in range(a.G)], priors=f32(w[s])) for s in range(S)]
    ends = np.array([0.01] * S)
    hmm = DenseHMM(dists, edges=f32(t), starts=f32(np.full(S, 1.0 / S)), ends=f32(ends)).cuda()
    X = torch.tensor(batch, dtype=torch.float32, device="cuda")
    with torch.no_grad():
        hmm.log_probability(X[:1, :2])  # the caches and kernels, off the clock
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        lp = hmm.log_probability(X)
        torch.cuda.synchronize()
        wall = time.perf_counter() - t0
    line("pomegranate", f"DenseHMM over GeneralMixtureModel of full Normals, float32 on "
         f"{torch.cuda.get_device_name(0)}", batch, wall, float(lp[0]))


def run_dynamax(a):
    import jax
    import jax.numpy as jnp
    from dynamax.hidden_markov_model import GaussianMixtureHMM
    dev = jax.devices()[0]
    if dev.platform != "gpu":
        print(f"PEER\tdynamax\tskipped: JAX runs on {dev.platform}, not a GPU")
        return
    mean, covs, w, t, batch = load(a)
    S = a.S
    hmm = GaussianMixtureHMM(S, a.G, a.D)
    params, _ = hmm.initialize(
        initial_probs=jnp.full(S, 1.0 / S, jnp.float32),
        transition_matrix=jnp.asarray(t / t.sum(axis=1, keepdims=True), jnp.float32),
        emission_weights=jnp.asarray(w, jnp.float32), emission_means=jnp.asarray(mean, jnp.float32),
        emission_covariances=jnp.asarray(covs, jnp.float32))
    score = jax.jit(jax.vmap(lambda x: hmm.marginal_log_prob(params, x)))
    X = jax.device_put(jnp.asarray(batch, jnp.float32))
    jax.block_until_ready(score(X))  # compiled for these shapes, off the clock
    t0 = time.perf_counter()
    lp = jax.block_until_ready(score(X))
    line("dynamax", f"GaussianMixtureHMM full, float32 on {dev.device_kind}", batch,
         time.perf_counter() - t0, float(lp[0]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("peer", choices=["hmmlearn", "pomegranate", "dynamax"])
    ap.add_argument("params")
    ap.add_argument("frames")
    ap.add_argument("S", type=int)
    ap.add_argument("G", type=int)
    ap.add_argument("D", type=int)
    ap.add_argument("U", type=int)
    ap.add_argument("--utterances", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--length", type=int, default=100)
    a = ap.parse_args()
    run = {"hmmlearn": run_hmmlearn, "pomegranate": run_pomegranate, "dynamax": run_dynamax}[a.peer]
    try:
        run(a)
    except ImportError as e:
        print(f"PEER\t{a.peer}\tskipped: {e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
