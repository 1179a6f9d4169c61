#!/usr/bin/env python3
# peers.py: the peers of issue 23's benchmark on one workload (a .hmm written by
# make-data and its FASTA): dynamax, pomegranate and hmmlearn, each timed for a
# posterior or one EM iteration; one PEER line per timing, and the fitted
# parameters in OUTDIR/WORKLOAD-PEER-fit.json for compare.py.
#   peers.py WORKLOAD.hmm WORKLOAD.fa OUTDIR [--peers dynamax,pomegranate,hmmlearn] [--threads 16] [--repeats 3] [--limit N]

# dynamax: hmm_smoother over a vmap of sequences; one EM iteration.
# pomegranate: DenseHMM.fit(max_iter=1) on the GPU. hmmlearn: CategoricalHMM,
# one EM iteration with its E-step over worker processes. Each line: PEER
# workload peer what seconds total_loglik note.
import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.append(os.path.join(HERE, "stubs"))  # apricot, fastprogress, only if missing
import numpy as np  # noqa: E402

from hmmfile import read_fasta, read_hmm  # noqa: E402


def report(workload, peer, what, seconds, loglik, note=""):
    ll = "nan" if loglik is None else f"{loglik:.6f}"
    if "median of" in note and SPREAD.get("last"):
        note += f" (runs: {SPREAD.pop('last')})"
    print(f"PEER\t{workload}\t{peer}\t{what}\t{seconds:.4f}\t{ll}\t{note}", flush=True)


def save_fit(outdir, workload, peer, pi, A, B, loglik, extra=None):
    d = {"workload": workload, "peer": peer, "loglik_start": float(loglik),
         "pi": np.asarray(pi, dtype=float).tolist(), "A": np.asarray(A, dtype=float).tolist(),
         "B": np.asarray(B, dtype=float).tolist()}
    d.update(extra or {})
    with open(os.path.join(outdir, f"{workload}-{peer}-fit.json"), "w") as f:
        json.dump(d, f)


SPREAD = {}


def timed(fn, repeats, sync):
    """Median wall seconds of REPEATS calls of FN (each followed by SYNC on its
    result), and the last result; every call's seconds go to SPREAD["last"]."""
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        sync(out)
        times.append(time.perf_counter() - t0)
    SPREAD["last"] = " ".join(f"{t:.4f}" for t in times)
    return statistics.median(times), out


# ---------------------------------------------------------------- dynamax
def run_dynamax(wl, m, X, outdir, repeats):
    import jax
    import jax.numpy as jnp
    from functools import partial
    from dynamax.hidden_markov_model import CategoricalHMM
    from dynamax.hidden_markov_model.inference import hmm_smoother

    dev = jax.devices()[0]
    note = f"jax {jax.__version__} on {dev.platform}:{dev.device_kind}, float32"
    K, S = m["B"].shape
    pi, A = jnp.asarray(m["pi"], jnp.float32), jnp.asarray(m["A"], jnp.float32)
    logB = jnp.log(jnp.asarray(m["B"], jnp.float32))
    Xd = jax.device_put(jnp.asarray(X, jnp.int32))
    sync = lambda out: jax.block_until_ready(out)

    # Posterior: smoothed marginals of every position (kept on the GPU) and
    # their argmax (the decode that hmmc's segments are made of). hmm_smoother
    # also sums expected transitions (its compute_trans_probs=False fails in
    # dynamax 1.0.3: not a static argument); nothing returns them, so XLA
    # drops that work from the compiled function.
    @jax.jit
    def posterior(Xd):
        def one(x):
            post = hmm_smoother(pi, A, logB[:, x].T)
            return post.marginal_loglik, post.smoothed_probs, jnp.argmax(post.smoothed_probs, axis=1)
        ll, probs, decode = jax.vmap(one)(Xd)
        return ll.sum(), probs, decode

    t0 = time.perf_counter()
    out = posterior(Xd)
    sync(out)
    report(wl, "dynamax", "posterior-compile+first", time.perf_counter() - t0, float(out[0]), note)
    del out
    secs, out = timed(lambda: posterior(Xd), repeats, sync)
    report(wl, "dynamax", "posterior", secs, float(out[0]), note + f", median of {repeats}")
    del out

    # One EM iteration. Dirichlet concentrations 1: the M-step is then plain
    # maximum likelihood (the default 1.1 adds 0.1 pseudocounts).
    hmm = CategoricalHMM(K, 1, S, initial_probs_concentration=1.0,
                         transition_matrix_concentration=1.0, emission_prior_concentration=1.0)
    params, props = hmm.initialize(initial_probs=pi, transition_matrix=A,
                                   emission_probs=jnp.exp(logB)[:, None, :])
    emissions = Xd[:, :, None]
    log_prior = float(hmm.log_prior(params))

    # fit_em builds a new jitted function on every call, so each call
    # compiles; the step it scans, jitted once, is timed without compiling.
    @jax.jit
    def em_step(params, emissions):
        batch_stats, lls = jax.vmap(partial(hmm.e_step, params))(emissions, None)
        new, _ = hmm.m_step(params, props, batch_stats, hmm.initialize_m_step_state(params, props))
        return new, lls.sum()

    t0 = time.perf_counter()
    fitted, lps = hmm.fit_em(params, props, emissions, num_iters=1, verbose=False)
    sync((fitted, lps))
    report(wl, "dynamax", "fit_em(num_iters=1) call, compile included",
           time.perf_counter() - t0, float(lps[0]) - log_prior, note)
    t0 = time.perf_counter()
    out = em_step(params, emissions)
    sync(out)
    report(wl, "dynamax", "em-iteration-compile+first", time.perf_counter() - t0, float(out[1]), note)
    secs, (new, ll) = timed(lambda: em_step(params, emissions), repeats, sync)
    report(wl, "dynamax", "em-iteration", secs, float(ll),
           note + f", fit_em's step (e_step vmapped, m_step) jitted once, median of {repeats}")
    diff = max(float(jnp.max(jnp.abs(a - b))) for a, b in zip(jax.tree_util.tree_leaves(new),
                                                             jax.tree_util.tree_leaves(fitted)))
    if diff > 1e-5:
        print(f"peers.py: dynamax: fit_em and its step jitted once differ by {diff:g}", file=sys.stderr)
    save_fit(outdir, wl, "dynamax", new.initial.probs, new.transitions.transition_matrix,
             new.emissions.probs[:, 0, :], float(ll),
             {"seconds": secs, "note": note, "fit_em_vs_step": diff})


# ------------------------------------------------------------ pomegranate
def run_pomegranate(wl, m, X, outdir, repeats, batch_bytes):
    import torch
    from pomegranate.distributions import Categorical
    from pomegranate.hmm import DenseHMM

    dev = "cuda" if torch.cuda.is_available() else "cpu"
    name = torch.cuda.get_device_name(0) if dev == "cuda" else "cpu"
    K, S = m["B"].shape
    n, L = X.shape
    # forward_backward holds an (n, L-1, K, K) tensor of every transition's
    # posterior: sequences go in batches of at most BATCH_BYTES of it (fit
    # takes a list of tensors and sums their statistics: the same update).
    per_seq = (L - 1) * K * K * 4
    nb = max(1, min(n, int(batch_bytes // per_seq)))
    note = f"torch {torch.__version__} on {dev}:{name}, float32, batches of {nb} sequences"
    Xt = torch.as_tensor(X, dtype=torch.int64, device=dev).unsqueeze(-1)
    batches = [Xt[i:i + nb] for i in range(0, n, nb)]
    ends = np.ones(K, dtype=np.float32)  # every state -> end 1, as in the .hmm

    def model():
        dists = [Categorical(probs=m["B"][i:i + 1].astype(np.float32)) for i in range(K)]
        return DenseHMM(dists, edges=m["A"].astype(np.float32), starts=m["pi"].astype(np.float32),
                        ends=ends, max_iter=1, verbose=False).to(dev)

    def sync(_):
        if dev == "cuda":
            torch.cuda.synchronize()

    with torch.no_grad():
        t0 = time.perf_counter()
        model().fit(batches[0][: min(nb, 64)])
        sync(None)
        report(wl, "pomegranate", "warm-up fit (64 sequences)", time.perf_counter() - t0, None, note)
        ll = sum(float(model().log_probability(b).sum()) for b in batches)
        secs, fitted = timed(lambda: model().fit(batches if len(batches) > 1 else batches[0]),
                             repeats, sync)
    report(wl, "pomegranate", "em-iteration", secs, ll,
           note + f", DenseHMM.fit(max_iter=1) with the model's construction, median of {repeats}; "
           "loglik from log_probability at the starting parameters")
    # fit re-estimates end probabilities too and divides each row by its total
    # including the end count; dividing each row by its own sum gives the
    # standard estimate (expected transitions over expected departures).
    E = torch.exp(fitted.edges).double().cpu().numpy()
    A = E / E.sum(axis=1, keepdims=True)
    pi = torch.exp(fitted.starts).double().cpu().numpy()
    B = np.stack([torch.as_tensor(d.probs).double().cpu().numpy()[0] for d in fitted.distributions])
    save_fit(outdir, wl, "pomegranate", pi, A, B, ll,
             {"seconds": secs, "note": note + "; edges rows renormalised (ends re-estimated by fit)"})


# --------------------------------------------------------------- hmmlearn
_HL = {}


def _hl_estep(span):
    """The E-step of hmmlearn over sequences SPAN (a worker process)."""
    lo, hi = span
    model, X = _HL["model"], _HL["X"]
    L = X.shape[1]
    stats, logprob = model._do_estep(X[lo:hi].reshape(-1, 1), np.full(hi - lo, L))
    return stats, logprob


def run_hmmlearn(wl, m, X, outdir, repeats, threads, implementation):
    import multiprocessing as mp

    import hmmlearn
    from hmmlearn.hmm import CategoricalHMM

    K, S = m["B"].shape
    n = X.shape[0]
    model = CategoricalHMM(n_components=K, n_iter=1, init_params="", params="ste",
                           implementation=implementation)
    model.n_features = S
    model.startprob_, model.transmat_, model.emissionprob_ = m["pi"], m["A"], m["B"]
    model._check()
    _HL["model"], _HL["X"] = model, X.astype(np.int64)
    chunks = max(threads * 4, 1)
    edges = np.linspace(0, n, chunks + 1).astype(int)
    spans = [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:]) if b > a]
    note = (f"hmmlearn {hmmlearn.__version__}, float64, implementation={implementation}, "
            f"E-step (its _do_estep) over {threads} forked processes in {len(spans)} chunks, "
            "statistics summed, then its _do_mstep")
    t0 = time.perf_counter()
    pool = mp.get_context("fork").Pool(threads)
    pool.map(abs, range(threads))
    pool_start = time.perf_counter() - t0

    def iteration():
        parts = pool.map(_hl_estep, spans)
        stats = parts[0][0]
        for s, _ in parts[1:]:
            for k in stats:
                stats[k] = stats[k] + s[k]
        ll = sum(p for _, p in parts)
        fitted = CategoricalHMM(n_components=K, n_iter=1, init_params="", params="ste",
                                implementation=implementation)
        fitted.n_features = S
        fitted.startprob_, fitted.transmat_, fitted.emissionprob_ = m["pi"], m["A"], m["B"]
        fitted._do_mstep(stats)
        return fitted, ll

    secs, (fitted, ll) = timed(iteration, repeats, lambda _: None)
    pool.close()
    pool.join()
    report(wl, "hmmlearn", "em-iteration", secs, ll,
           note + f", median of {repeats} (pool start {pool_start:.2f} s not included)")
    save_fit(outdir, wl, "hmmlearn", fitted.startprob_, fitted.transmat_, fitted.emissionprob_, ll,
             {"seconds": secs, "note": note})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("hmm")
    ap.add_argument("fasta")
    ap.add_argument("outdir")
    ap.add_argument("--peers", default="dynamax,pomegranate,hmmlearn")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--limit", type=int, default=0, help="only the first N sequences")
    ap.add_argument("--pomegranate-batch-gb", type=float, default=4.0)
    ap.add_argument("--hmmlearn-implementation", default="scaling", choices=["scaling", "log"])
    a = ap.parse_args()
    os.makedirs(a.outdir, exist_ok=True)
    m = read_hmm(a.hmm)
    if not np.allclose(m["ends"], 1.0):
        raise SystemExit(f"{a.hmm}: every state needs `-> end 1` for the peers' likelihood to be P(x)")
    wl = os.path.basename(a.hmm).split(".")[0].split("-")[0]
    t0 = time.perf_counter()
    X = read_fasta(a.fasta, m["alphabet"])
    if a.limit:
        X = X[: a.limit]
    print(f"# peers.py: {wl}: {X.shape[0]} sequences of {X.shape[1]} symbols, {m['B'].shape[0]} states, "
          f"read in {time.perf_counter() - t0:.2f} s", flush=True)
    for peer in a.peers.split(","):
        t0 = time.perf_counter()
        try:
            if peer == "dynamax":
                run_dynamax(wl, m, X, a.outdir, a.repeats)
            elif peer == "pomegranate":
                run_pomegranate(wl, m, X, a.outdir, a.repeats, a.pomegranate_batch_gb * 1e9)
            elif peer == "hmmlearn":
                run_hmmlearn(wl, m, X, a.outdir, a.repeats, a.threads, a.hmmlearn_implementation)
            else:
                raise SystemExit(f"peers.py: unknown peer {peer!r} (dynamax, pomegranate, hmmlearn)")
        except (ImportError, RuntimeError, MemoryError) as e:
            print(f"PEER\t{wl}\t{peer}\tfailed\tnan\tnan\t{type(e).__name__}: {e}", flush=True)
        print(f"# peers.py: {wl}: {peer} done in {time.perf_counter() - t0:.1f} s", flush=True)


if __name__ == "__main__":
    main()
