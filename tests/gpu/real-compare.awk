# real-compare.awk: compares a GPU run's rows (first file) with the CPU
# path's (second) over the same observations; LENGTHS (third file: "NAME
# L" a line) gives each sequence's observations. Float: within 1e-5 x
# max(1, |cpu|) + 1e-8 nats an observation; DOUBLE=1: 1e-10 x max(1, |cpu|)
# + 1e-12 an observation; -inf exactly. Posterior tables (a,b;c,d) within
# 1e-5 a value (double: 1e-9, printed with --decimals 12); decodes,
# segments and tracebacks the same in double; in float decodes but for
# near-ties (at most 1 in 20), and viterbi's paths not compared (another
# path of the same score is as right: tests/emulate/real-driver checks
# their scores; the viterbi score is compared here). Prints the worst ratio of difference to tolerance and each mismatch
# (the first 5); exit 1 on one.
FILENAME == ARGV[3] { len[$1] = $2; next }
FILENAME == ARGV[2] && /^#name\t/ { nl = split($0, label, "\t"); next }
/^#/ { next }
FILENAME == ARGV[1] { gpu[++ng] = $0; next }
{ cpu[++nc] = $0 }
END {
    if (ng != nc) { printf "rows: GPU %d, CPU %d\n", ng, nc; exit 1 }
    worst = 0; bad = 0
    for (r = 1; r <= nc; r++) {
        n = split(gpu[r], g, "\t"); m = split(cpu[r], c, "\t")
        if (n != m || g[1] != c[1]) { printf "row %d: %s against %s\n", r, g[1], c[1]; bad++; continue }
        L = len[c[1]] + 0
        for (k = 2; k <= m; k++) {
            if (c[k] ~ /[;,]/ || g[k] ~ /[;,]/) { # probability&: every value
                np = split(c[k], cp, /[;,]/); ng2 = split(g[k], gp, /[;,]/)
                ok = np == ng2
                for (v = 1; ok && v <= np; v++) {
                    d = gp[v] - cp[v]; d = d < 0 ? -d : d
                    # double: exp of alpha + beta - ln P, whose offsets add a
                    # rounding a frame at up to ~5 nats a frame: 4.5e-9 apart at
                    # 20,000 frames (all-long, H200, 2026-11-26)
                    ok = d <= (DOUBLE ? 1e-9 + 1e-12 * len[c[1]] : 1e-5)
                }
                if (!ok && bad++ < 5) printf "%s column %d: posteriors differ (value %d: GPU %s, CPU %s)\n", c[1], k, v - 1, gp[v - 1], cp[v - 1]
                continue
            }
            if (c[k] ~ /[a-zA-Z_:]/ && c[k] != "-inf" || c[k] == "-") { # decode, segments, traceback
                texts++
                if (g[k] == c[k]) continue
                # float: viterbi's path may be another of the same score (a tied model's
                # states share emissions: tests/emulate/real-driver scores such paths),
                # a decode differ at a near-tie
                # (TIES: a tied model, whose paths tie exactly, in double too)
                if ((!DOUBLE || TIES) && label[k] ~ /^viterbi\(/ && g[k] != "-" && c[k] != "-") { paths++; continue }
                if (!DOUBLE && g[k] != "-" && c[k] != "-") { differ++; continue }
                if (bad++ < 5) printf "%s column %d: GPU %.100s, CPU %.100s\n", c[1], k, g[k], c[k]
                continue
            }
            if (c[k] == "-inf" || g[k] == "-inf") {
                if (c[k] != g[k] && bad++ < 5) printf "%s column %d: GPU %s, CPU %s\n", c[1], k, g[k], c[k]
                continue
            }
            a = c[k] + 0; d = g[k] - a; d = d < 0 ? -d : d
            mag = a < 0 ? -a : a; mag = mag > 1 ? mag : 1
            tol = DOUBLE ? 1e-10 * mag + 1e-12 * L : 1e-5 * mag + 1e-8 * L
            if (d / tol > worst) worst = d / tol
            if (d > tol && bad++ < 5)
                printf "%s column %d: GPU %s, CPU %s (tolerance %.3g)\n", c[1], k, g[k], c[k], tol
        }
    }
    if (differ * 20 > texts) { printf "%d of %d decodes, segments and paths differ in float\n", differ, texts; bad++ }
    printf "worst %.3f of the tolerance%s\n", worst, texts ? sprintf(", %d of %d texts differ (float: %d decodes at near-ties, %d viterbi paths of float's ties)", differ + paths, texts, differ, paths) : ""
    exit bad > 0
}
