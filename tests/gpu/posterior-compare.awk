# posterior-compare.awk: a posterior program's GPU rows against its CPU path's
# (tests/gpu/posterior-check). Columns: name, score, decode, segments,
# probability&. Variables: states (the model's state names in declaration
# order, space-separated), label. Checks, row by row in the same order:
# scores within 1e-5 relative (1e-5 absolute below 1), both -inf together;
# every posterior within 1e-5 of the CPU's and each position's summing to 1
# within 1e-5 plus the printing's rounding (half a unit of the last printed
# decimal a state: 3.3e-5 for 66 states at 6 decimals); the GPU's decode, where it differs from the CPU's, a state
# whose CPU posterior is within 2e-5 of the position's largest (a near tie);
# the GPU's segments the runs of its own decode. Prints one summary line;
# exit status 1 on a difference.
function abs(x) { return x < 0 ? -x : x }
function bad(msg) { if (++problems <= 5) print label ": " msg; }
BEGIN {
    FS = "\t"
    n = split(states, name, " ")
    for (q = 1; q <= n; q++) index_of[name[q]] = q
}
FNR == 1 { file++ }
/^#/ { next }
file == 1 { cpu[++rows] = $0; next }
{
    r++
    if (r > rows) { bad("more GPU rows than CPU rows"); next }
    split(cpu[r], c, "\t")
    if ($1 != c[1]) { bad("row " r ": GPU " $1 ", CPU " c[1]); next }
    # scores
    if ($2 == "-inf" || c[2] == "-inf") {
        if ($2 != c[2]) bad($1 ": score GPU " $2 ", CPU " c[2])
    } else {
        d = abs($2 - c[2]) / (abs(c[2]) > 1 ? abs(c[2]) : 1)
        if (d > worst_score) worst_score = d
        if (d > 1e-5) bad($1 ": score GPU " $2 ", CPU " c[2])
    }
    # posteriors
    if (($5 == "-") != (c[5] == "-")) { bad($1 ": table '-' on one side only"); next }
    if ($5 == "-") { dashes++; next }
    L = split($5, grow, ";")
    if (split(c[5], crow, ";") != L) { bad($1 ": " L " positions on the GPU, not the CPU's"); next }
    split($3, gdec, " ")
    if (split(c[3], cdec, " ") != L || length(gdec) != L) { bad($1 ": decode lengths differ"); next }
    for (i = 1; i <= L; i++) {
        if (split(grow[i], g, ",") != n || split(crow[i], cc, ",") != n) {
            bad($1 ": position " i " has not " n " posteriors"); break
        }
        sum = 0; top = -1
        if (!rounding) { # the printed decimals, from the first value with a point
            for (q = 1; q <= n && !rounding; q++)
                if ((dot = index(g[q], ".")) > 0)
                    rounding = n * 0.5 * 10 ^ -(length(g[q]) - dot)
        }
        for (q = 1; q <= n; q++) {
            sum += g[q]
            d = abs(g[q] - cc[q])
            if (d > worst_post) worst_post = d
            if (cc[q] + 0 > top) top = cc[q] + 0
        }
        if (abs(sum - 1) > worst_sum) worst_sum = abs(sum - 1)
        if (abs(sum - 1) > 1e-5 + rounding) bad($1 ": position " i " posteriors sum to " sum)
        if (gdec[i] != cdec[i]) {
            ties++
            q = index_of[gdec[i]]
            if (!q || cc[q] < top - 2e-5) bad($1 ": position " i " decodes " gdec[i] " on the GPU, " cdec[i] " on the CPU")
        }
        positions++
    }
    if (worst_post > 1e-5 && !reported) { bad($1 ": a posterior differs by " worst_post); reported = 1 }
    # segments: the runs of the GPU's decode
    runs = ""; first = 1
    for (i = 2; i <= L + 1; i++)
        if (i > L || gdec[i] != gdec[first]) {
            runs = runs (runs == "" ? "" : " ") gdec[first] ":" first (i - 1 > first ? "-" (i - 1) : "")
            first = i
        }
    if ($4 != runs) bad($1 ": segments are not the runs of decode")
}
END {
    if (r != rows) bad(r " GPU rows, " rows " CPU rows")
    printf "%s: %d rows, %d positions (%d no path or empty), scores within %.2g relative, posteriors within %.2g (sums within %.2g), %d near ties decoded otherwise\n", \
        label, rows, positions, dashes, worst_score, worst_post, worst_sum, ties
    exit problems > 0
}
