#!/usr/bin/env python3
# scan-dynamax.py: dynamax's parallel_hmm_filter and parallel_hmm_smoother
# (associative scans, JAX) and hmm_posterior_mode (viterbi) on the casino
# sequence that tests/gpu/scan-check scores, for its timing table: each one's
# seconds (compiled, median of 3, on the device JAX picks) and a number it
# gives (the filter's and smoother's log-likelihood, the mode's count of
# loaded positions). dynamax's model is the casino without the end state
# (its rows out of loaded sum to 0.99999), so its log-likelihood differs from
# hmmc's forward score by about ln(1e-5) plus whether the last roll is
# loaded: timings, not checks.
#   scan-dynamax.py CASINO.fa   -> a line each: "function<TAB>seconds<TAB>value<TAB>device"
#                                  (a function that fails: "function<TAB>failed<TAB>why")
import statistics
import sys
import time

import numpy as np


def timed(run, loglik):
    run(loglik).block_until_ready()  # compile
    times, value = [], None
    for _ in range(3):
        t0 = time.perf_counter()
        value = run(loglik).block_until_ready()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), value


def main():
    import jax
    import jax.numpy as jnp
    # the parallel functions are parallel_inference's, exported under these names
    from dynamax.hidden_markov_model import (hmm_posterior_mode, parallel_hmm_filter,
                                             parallel_hmm_smoother)

    with open(sys.argv[1], "rb") as f:
        text = f.read()
    body = b"".join(line for line in text.split(b"\n") if line and not line.startswith(b">"))
    x = np.frombuffer(body, dtype=np.uint8) - ord("1")
    fair = np.full(6, 1 / 6)
    loaded = np.array([0.1, 0.1, 0.1, 0.1, 0.1, 0.5])
    emissions = np.log(np.stack([fair, loaded]))  # 2 x 6
    loglik = jnp.asarray(emissions[:, x].T, dtype=jnp.float32)  # T x 2
    initial = jnp.array([1.0, 0.0], dtype=jnp.float32)
    transitions = jnp.array([[0.95, 0.05], [0.02, 0.97999]], dtype=jnp.float32)
    runs = {
        "parallel_hmm_filter":
            lambda ll: parallel_hmm_filter(initial, transitions, ll).marginal_loglik,
        "parallel_hmm_smoother":
            lambda ll: parallel_hmm_smoother(initial, transitions, ll).marginal_loglik,
        "hmm_posterior_mode":
            lambda ll: jnp.sum(hmm_posterior_mode(initial, transitions, ll)),
    }
    device = jax.devices()[0]
    for name, fn in runs.items():
        try:
            seconds, value = timed(jax.jit(fn), loglik)
            print(f"{name}\t{seconds:.4f}\t{float(value):.3f}\t{device}", flush=True)
        except Exception as e:  # one that fails (memory) leaves the others' lines
            print(f"{name}\tfailed\t{type(e).__name__}: {str(e)[:200]}", flush=True)


if __name__ == "__main__":
    main()
