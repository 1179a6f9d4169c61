# scores.awk: awk functions shared by the differential test scripts for
# comparing natural-log scores as the programs print them ("%.Nf" or "-inf").
# Load it before the program that uses it, both as files (portable to mawk
# and gawk): awk -f tests/differential/scores.awk -f PROGRAM.awk

# Whether text is a score: a decimal number or -inf.
function is_score(text) {
    return text == "-inf" || text ~ /^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$/
}

# Whether two scores agree: -inf only with -inf, otherwise within a relative
# tolerance `tol` (an absolute one when both are near 0).
function same_score(a, b, tol,    diff, scale) {
    if (!is_score(a) || !is_score(b))
        return 0
    if (a == "-inf" || b == "-inf")
        return a == b
    diff = a - b
    if (diff < 0) diff = -diff
    scale = (a < 0 ? -a : a)
    if ((b < 0 ? -b : b) > scale) scale = (b < 0 ? -b : b)
    if (scale < 1) scale = 1
    return diff <= tol * scale
}

# Whether score a is at most score b, up to the tolerance.
function score_at_most(a, b, tol,    scale) {
    if (!is_score(a) || !is_score(b))
        return 0
    if (a == "-inf")
        return 1
    if (b == "-inf")
        return 0
    scale = (a < 0 ? -a : a)
    if (scale < 1) scale = 1
    return a + 0 <= b + tol * scale
}
