# scan-compare.awk: compares a program's rows with the time-parallel scan
# forced on (tests/differential/scan) with its rows on one thread: the same
# names in the same order, scores within rel (relative; -inf only with
# -inf), every other field (traceback, segments) byte for byte, except a
# traceback that differs: it is printed as "TIE<TAB>name<TAB>score<TAB>traceback"
# (score: the one-thread viterbi score of the same call) for the caller to
# check that it is another best path (its own probability, by hmmref --path).
#   awk -F '\t' -v rel=1e-12 -v what=NAME -f scan-compare.awk SERIAL.tsv SCAN.tsv
# Both files with their '#name' header. Prints the largest relative difference
# seen ("max_rel X") and one line per problem (at most 5); exit status 1 if
# there was one.
function problem(text) {
    problems++
    if (problems <= 5)
        print "FAIL " what ": " text
}
function is_score(v) { return v ~ /^-?(inf|[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?)$/ }
function abs(v) { return v < 0 ? -v : v }
FNR == 1 { file++ }
file == 1 && FNR == 1 { for (f = 2; f <= NF; f++) label[f] = $f }
file == 1 { serial[FNR] = $0; n1 = FNR; next }
{
    n2 = FNR
    if (!(FNR in serial)) { problem("an extra row " $1); next }
    split(serial[FNR], want, "\t")
    if (want[1] != $1) { problem("row " FNR " is " $1 ", expected " want[1]); next }
    for (f = 2; f <= NF; f++) {
        if (is_score(want[f]) && is_score($f)) {
            if (want[f] == "-inf" || $f == "-inf") {
                if (want[f] != $f)
                    problem($1 " field " f ": " $f " against " want[f])
                continue
            }
            d = abs($f - want[f]) / (abs(want[f]) > 1 ? abs(want[f]) : 1)
            if (d > max_rel)
                max_rel = d
            if (d > rel)
                problem($1 " field " f ": " $f " against " want[f] " (relative " d ")")
        } else if (want[f] != $f && label[f] ~ /\.traceback$/) {
            call = label[f]
            sub(/\.traceback$/, ".score", call)
            for (g = 2; g <= NF; g++)
                if (label[g] == call)
                    printf "TIE\t%s\t%s\t%s\n", $1, want[g], $f
        } else if (want[f] != $f) {
            problem($1 " field " f " differs: " substr($f, 1, 80) " against " substr(want[f], 1, 80))
        }
    }
}
END {
    if (n1 != n2)
        problem(n2 " rows, expected " n1)
    printf "max_rel %.3g\n", max_rel + 0
    exit problems > 0
}
