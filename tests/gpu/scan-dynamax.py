#!/usr/bin/env python3
# scan-dynamax.py: dynamax's associative scan (parallel_hmm_filter, JAX) on
# the casino sequence that tests/gpu/scan-check scores, for its timing table:
# the filter's seconds (compiled, median of 3, on the device JAX picks) and
# its log-likelihood. dynamax's model is the casino without the end state
# (its rows out of loaded sum to 0.99999), so its log-likelihood differs from
# hmmc's forward score by about ln(1e-5) plus whether the last roll is
# loaded: a timing, not a check.
#   scan-dynamax.py CASINO.fa   -> prints "seconds<TAB>loglik<TAB>device"
import statistics
import sys
import time

import numpy as np


def main():
    import jax
    import jax.numpy as jnp
    from dynamax.hidden_markov_model.inference import parallel_hmm_filter

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
    run = jax.jit(lambda ll: parallel_hmm_filter(initial, transitions, ll).marginal_loglik)
    run(loglik).block_until_ready()  # compile
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        value = run(loglik).block_until_ready()
        times.append(time.perf_counter() - t0)
    print(f"{statistics.median(times):.4f}\t{float(value):.3f}\t{jax.devices()[0]}")


if __name__ == "__main__":
    main()
