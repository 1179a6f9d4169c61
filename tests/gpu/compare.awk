# compare.awk: compares a CUDA program's rows on the GPU with its rows on the
# CPU path, for tests/gpu/check.
#   awk -F '\t' -v tol=1e-5 -v per_symbol=1e-8 -v what=float -f compare.awk \
#       LENGTHS.tsv CPU.tsv GPU.tsv
# LENGTHS: name<TAB>length of every sequence. CPU, GPU: the program's output
# with its header ('#name<TAB>LABEL...'). Score columns (labels ending in
# .score) must agree within tol * max(1, |score|) + per_symbol * length
# (rounding adds up along the sequence; viterbi columns, labels starting
# 'viterbi(', take per_symbol_max when it is given: a float max-plus kernel
# rounds each position's sums, and the column's shift back to a best of 0,
# at the magnitude of the values, about 1e-7 nats for values of a few nats,
# where a sum-product kernel rescales by exact powers of two), -inf exactly with -inf; every row must be there, in
# the same order, under the same name. Text columns (tracebacks) are checked
# elsewhere (their own probability, through hmmref --path). Prints one line
# per problem (at most 8), then "worst WHAT DIFF" with the largest relative
# difference seen; exit status 1 on any problem.

function abs(x) { return x < 0 ? -x : x }

function problem(text) {
    problems++
    if (problems <= 8)
        print text
}

FILENAME == ARGV[1] { length_of[$1] = $2; next }
FNR == 1 && /^#name/ {
    for (i = 2; i <= NF; i++) {
        is_score[i] = ($i ~ /\.score$/)
        per_symbol_of[i] = ($i ~ /^viterbi\(/ && per_symbol_max != "") ? per_symbol_max : per_symbol
    }
    next
}
/^#/ { next }
FILENAME == ARGV[2] {
    n_cpu++
    cpu_name[n_cpu] = $1
    for (i = 2; i <= NF; i++)
        cpu[n_cpu, i] = $i
    next
}
{
    n_gpu++
    if (cpu_name[n_gpu] != $1) {
        problem("row " n_gpu ": name " $1 ", the CPU path has " cpu_name[n_gpu])
        next
    }
    for (i = 2; i <= NF; i++) {
        if (!is_score[i])
            continue
        want = cpu[n_gpu, i]
        got = $i
        if (want == "-inf" || got == "-inf") {
            if (want != got)
                problem($1 " column " i ": GPU " got ", CPU " want)
            continue
        }
        scale = abs(want) > 1 ? abs(want) : 1
        d = abs(got - want) / scale
        if (d > worst)
            worst = d
        if (abs(got - want) > tol * scale + per_symbol_of[i] * length_of[$1])
            problem($1 " column " i ": GPU " got ", CPU " want " (relative difference " d \
                    ", length " length_of[$1] ")")
    }
}
END {
    if (n_gpu != n_cpu)
        problem("the GPU printed " n_gpu " rows, the CPU path " n_cpu)
    printf "worst %s %.3g\n", what, worst
    exit problems > 0
}
