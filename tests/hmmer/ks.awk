# ks.awk: the two-sample Kolmogorov-Smirnov statistic of two files of one
# number a line: prints "D n m mean1 mean2", D the largest difference of
# their empirical distribution functions. awk -f ks.awk A B
FNR == NR { a[++n] = $1; s1 += $1; next }
{ b[++m] = $1; s2 += $1 }
function sort(x, k,   i, j, t) {
    for (i = 2; i <= k; i++) { t = x[i]; for (j = i - 1; j >= 1 && x[j] > t; j--) x[j + 1] = x[j]; x[j + 1] = t }
}
END {
    sort(a, n); sort(b, m)
    i = j = 1; d = 0
    while (i <= n && j <= m) {
        v = a[i] <= b[j] ? a[i] : b[j]
        while (i <= n && a[i] <= v) i++
        while (j <= m && b[j] <= v) j++
        diff = (i - 1) / n - (j - 1) / m; if (diff < 0) diff = -diff
        if (diff > d) d = diff
    }
    printf "%.4f %d %d %.2f %.2f\n", d, n, m, s1 / n, s2 / m
}
