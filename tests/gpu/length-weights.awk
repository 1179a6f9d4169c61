# length-weights.awk: a copy of a model (genmodel's, from tests/gpu/check)
# whose moves out of the start state and into the end state take weights of
# the sequence's length L: each keeps its number, times (L + 1) / (L + 2),
# 4 / (L + 4) or ((L + 1) / (L + 2)) ^ 2 in turn (docs/language.md,
# "Length-dependent weights"). Neither kind of move can lie on a silent cycle.
#   awk -f tests/gpu/length-weights.awk MODEL.hmm > LENGTH-MODEL.hmm
/^[ \t]*startstate / { start = $2; sub(/;.*/, "", start) }
/^[ \t]*endstate / { end = $2; sub(/;.*/, "", end) }
$2 == "->" && ($1 == start || $3 == end) && $4 ~ /^[0-9.]/ {
    w = $4
    sub(/;$/, "", w)
    k = index($0, " " $3 " ") + length($3) + 2 # just after the target's name
    at = k - 1 + index(substr($0, k), w)
    n++
    x = n % 3 == 0 ? "(L + 1) / (L + 2)" : n % 3 == 1 ? "4 / (L + 4)" : "((L + 1) / (L + 2)) ^ 2"
    $0 = substr($0, 1, at - 1) "(" w " * " x ")" substr($0, at + length(w))
}
{ print }
