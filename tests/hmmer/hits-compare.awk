# hits-compare.awk: compares hmmc's --tblout (first file) with hmmsearch's
# (second file), both in hmmsearch 3.3.2's layout, for tests/hmmer/hits. The
# third file holds "NAME E-VALUE" for every sequence, the E-value worked out
# here from the program's plain forward score (hits: full_evalues), so that
# hmmc's are checked beyond the tables' two digits.
# -v below=X: the E-value below which both must report the same sequences
# (a sequence whose E-value is within 2% of X in either table is borderline
# and may be on either side); -v etol=R: the relative tolerance of hmmc's
# E-values against hmmsearch's, on top of the rounding of hmmsearch's two
# significant digits. hmmc's table must print each E-value as %.2g of the
# third file's.
# Prints "same N", "E WORST NAME" and a "differ NAME ..." line per difference.
function abs(x) { return x < 0 ? -x : x }
function border(e) { return abs(e - below) <= 0.02 * below }
FNR == 1 { file++ }
/^#/ { next }
file == 1 { ours[$1] = $5; next }
file == 2 { theirs[$1] = $5; next }
file == 3 { full[$1] = $2 }
END {
    for (n in ours) {
        e = ours[n] + 0
        if (!(n in full) || sprintf("%.2g", full[n]) + 0 != e)
            print "differ " n " E-value printed " ours[n] ", worked out " full[n]
        if (!(n in theirs)) {
            if (e < below && !border(e)) print "differ " n " only hmmc reports it, E " e
            continue
        }
        t = theirs[n] + 0
        if ((e < below) != (t < below) && !border(e) && !border(t))
            print "differ " n " E " e " hmmsearch " t
        if (t > 0) {
            # hmmsearch prints %.2g: it rounds by up to half a unit of the second digit
            m = t; while (m >= 10) m /= 10; while (m < 1) m *= 10
            rel = abs(full[n] / t - 1) - 0.05 / m
            if (rel > worst) { worst = rel; wn = n }
            if (rel > etol) print "differ " n " E-value " full[n] " hmmsearch " t
        }
        if (e < below) same++
    }
    for (n in theirs)
        if (!(n in ours) && theirs[n] + 0 < below && !border(theirs[n] + 0))
            print "differ " n " only hmmsearch reports it, E " theirs[n]
    print "same " same + 0
    printf "E %.4f %s\n", worst + 0, wn
}
