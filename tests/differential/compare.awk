# compare.awk: compares the rows of one compiled model with the reference,
# for tests/differential/run. Load tests/differential/scores.awk first.
#   awk -F '\t' -v kind=gen|models [-v tol=1e-9] -f scores.awk -f compare.awk \
#       REFERENCE.tsv FOLD.tsv NOFOLD.tsv FOLD-PATHS.tsv NOFOLD-PATHS.tsv
# REFERENCE: hmmref's rows (name, forward, backward, viterbi, traceback, or
# name, INVALID). FOLD, NOFOLD: the program's rows without '#' lines; for
# kind=gen: name, forward, backward, viterbi, traceback; for kind=models:
# name, forward, viterbi, traceback. *-PATHS: hmmref --path of their
# tracebacks (name, log probability). Prints one line per problem, at most
# a few per model; exit status 1 if there was one.

function problem(text) {
    problems++
    if (problems <= 8)
        print text
    else if (problems == 9)
        print "(more differences left out)"
}

BEGIN { if (tol == "") tol = 1e-9 }

function shorten(text) {
    return length(text) > 120 ? substr(text, 1, 120) "..." : text
}

FILENAME == ARGV[1] {
    if ($2 == "INVALID") next
    expected++
    want_name[expected] = $1
    ref_forward[$1] = $2; ref_backward[$1] = $3; ref_viterbi[$1] = $4
    next
}
FILENAME == ARGV[2] || FILENAME == ARGV[3] {
    build = (FILENAME == ARGV[2]) ? "fold" : "nofold"
    n = ++rows[build]
    name[build, n] = $1
    fields = (kind == "gen") ? 5 : 4
    if (NF != fields) {
        problem(build " row " n " (" $1 "): " NF " fields, want " fields ": " shorten($0))
        next
    }
    forward[build, n] = $2
    if (kind == "gen") {
        backward[build, n] = $3; viterbi[build, n] = $4; traceback[build, n] = $5
    } else {
        viterbi[build, n] = $3; traceback[build, n] = $4
    }
    next
}
{
    build = (FILENAME == ARGV[4]) ? "fold" : "nofold"
    path_score[build, $1] = $2
}

function check_row(build, n,    who, f, v) {
    who = build " " name[build, n] ": "
    if (name[build, n] != want_name[n]) {
        problem(build " row " n ": sequence " name[build, n] ", want " want_name[n] " (missing, repeated or out of order)")
        return 0
    }
    if (!((build, n) in forward))
        return 1
    f = forward[build, n]; v = viterbi[build, n]
    if (!same_score(f, ref_forward[want_name[n]], tol))
        problem(who "forward " f ", reference " ref_forward[want_name[n]])
    if (kind == "gen" && !same_score(backward[build, n], ref_backward[want_name[n]], tol))
        problem(who "backward " backward[build, n] ", reference " ref_backward[want_name[n]])
    if (kind == "gen" && !same_score(backward[build, n], f, tol))
        problem(who "backward " backward[build, n] " != forward " f)
    if (!same_score(v, ref_viterbi[want_name[n]], tol))
        problem(who "viterbi " v ", reference " ref_viterbi[want_name[n]])
    if (!score_at_most(v, f, tol))
        problem(who "viterbi " v " > forward " f)
    if ((v == "-inf") != (traceback[build, n] == "-"))
        problem(who "viterbi " v " with traceback '" traceback[build, n] "'")
    else if (v != "-inf" && !((build, name[build, n]) in path_score))
        problem(who "traceback not checked (hmmref --path stopped before it)")
    else if (v != "-inf" && !same_score(path_score[build, name[build, n]], v, tol))
        problem(who "the traceback's own log probability " path_score[build, name[build, n]] " != viterbi " v ": " shorten(traceback[build, n]))
    return 1
}

function compare_builds(n,    i) {
    if (!(("fold", n) in forward) || !(("nofold", n) in forward))
        return
    if (!same_score(forward["fold", n], forward["nofold", n], tol))
        problem(name["fold", n] ": forward " forward["fold", n] " with folding, " forward["nofold", n] " without")
    if (kind == "gen" && !same_score(backward["fold", n], backward["nofold", n], tol))
        problem(name["fold", n] ": backward " backward["fold", n] " with folding, " backward["nofold", n] " without")
    if (!same_score(viterbi["fold", n], viterbi["nofold", n], tol))
        problem(name["fold", n] ": viterbi " viterbi["fold", n] " with folding, " viterbi["nofold", n] " without")
}

END {
    for (b = 1; b <= 2; b++) {
        build = (b == 1) ? "fold" : "nofold"
        if (rows[build] != expected)
            problem(build ": " rows[build] + 0 " rows, want " expected + 0 " (one per valid sequence)")
        for (n = 1; n <= rows[build] && n <= expected; n++)
            if (!check_row(build, n))
                break
    }
    for (n = 1; n <= expected; n++)
        if (name["fold", n] == want_name[n] && name["nofold", n] == want_name[n])
            compare_builds(n)
    exit problems > 0
}
