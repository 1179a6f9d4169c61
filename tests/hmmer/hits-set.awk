# hits-set.awk: the sequences two --tblout files report (hmmc's first,
# hmmsearch's second) must be the same, but for borderline ones: those
# whose value in column -v col=N of hmmsearch's table is within -v tol=X of
# -v at=Y (relative to Y when -v rel=1: E-values), for tests/hmmer/hits.
# Prints "reported N" and one "differ NAME ..." line per difference.
function abs(x) { return x < 0 ? -x : x }
function border(v) { return rel ? abs(v - at) <= tol * at : abs(v - at) <= tol }
FNR == 1 { file++ }
/^#/ { next }
file == 1 { ours[$1] = 1; n++; next }
file == 2 { theirs[$1] = $col }
END {
    for (s in ours)
        if (!(s in theirs)) print "differ " s " hmmc reports it, hmmsearch does not"
    for (s in theirs)
        if (!(s in ours) && !border(theirs[s] + 0))
            print "differ " s " hmmsearch reports it (" theirs[s] "), hmmc does not"
    print "reported " n + 0
}
