# real-train-compare.awk: a fitted source written by --train with the
# E-step on the (emulated) GPU (first file) against the CPU path's (second),
# and their runs' stderr (third, fourth): every number within 1e-4 x max(1,
# |number|), every other token the same, and the last log-likelihood within
# 1e-5 x max(1, |ll|). Prints how many numbers and the worst ratio to the
# tolerance, or the first mismatches; exit 1 on one.
function tokens(line, out,    n, rest) {
    n = 0
    rest = line
    while (match(rest, /-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?|[^0-9 \t-]+|-|[ \t]+/)) {
        if (substr(rest, RSTART, RLENGTH) !~ /^[ \t]+$/)
            out[++n] = substr(rest, RSTART, RLENGTH)
        rest = substr(rest, RSTART + RLENGTH)
    }
    return n
}
FILENAME == ARGV[1] { gpu[++ng] = $0; next }
FILENAME == ARGV[2] { cpu[++nc] = $0; next }
FILENAME == ARGV[3] && /log-likelihood/ { for (i = 1; i <= NF; i++) if ($i == "log-likelihood") gll = $(i + 1); next }
FILENAME == ARGV[4] && /log-likelihood/ { for (i = 1; i <= NF; i++) if ($i == "log-likelihood") cll = $(i + 1); next }
END {
    bad = 0; numbers = 0; worst = 0
    if (ng != nc) { printf "lines: GPU %d, CPU %d\n", ng, nc; exit 1 }
    for (r = 1; r <= nc; r++) {
        delete a; delete b
        na = tokens(gpu[r], a); nb = tokens(cpu[r], b)
        if (na != nb) { if (bad++ < 3) printf "line %d: %s | %s\n", r, gpu[r], cpu[r]; continue }
        for (k = 1; k <= na; k++) {
            if (a[k] ~ /^-?[0-9]/ && b[k] ~ /^-?[0-9]/) {
                numbers++
                d = a[k] - b[k]; d = d < 0 ? -d : d
                m = b[k] < 0 ? -b[k] : b[k] + 0; m = m > 1 ? m : 1
                if (d / (1e-4 * m) > worst) worst = d / (1e-4 * m)
                if (d > 1e-4 * m && bad++ < 3) printf "line %d: GPU %s, CPU %s\n", r, a[k], b[k]
            } else if (a[k] != b[k] && bad++ < 3) printf "line %d: %s against %s\n", r, a[k], b[k]
        }
    }
    if (gll == "" || cll == "") { print "no log-likelihood in the runs' output"; exit 1 }
    d = gll - cll; d = d < 0 ? -d : d; m = cll < 0 ? -cll : cll; m = m > 1 ? m : 1
    if (d > 1e-5 * m) { printf "log-likelihood GPU %s, CPU %s\n", gll, cll; bad++ }
    printf "%d numbers, worst %.3f of the tolerance; log-likelihood %s (CPU %s)\n", numbers, worst, gll, cll
    exit bad > 0
}
