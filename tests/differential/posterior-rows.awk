# posterior-rows.awk: checks hmmref --posterior rows on their own: every
# position's posteriors sum to 1 (within `tol`), the decode is the state of
# highest posterior (ties: the first declared, as the `# states:` line lists
# them), the segments are the runs of the decode, and an impossible or empty
# sequence prints `-` three times. Exit status 1 on a fault.
# Usage: awk -F '\t' -v tol=1e-12 -v label=TEXT -f posterior-rows.awk ROWS
function complain(text) { if (++bad <= 5) print label ": " $1 ": " text }
/^# states:/ { n = split(substr($0, 11), state, " "); next }
$2 == "INVALID" { next }
{
    rows++
    if (NF != 5) { complain(NF " fields"); next }
    if ($3 == "-" || $4 == "-" || $5 == "-") {
        if ($3 != "-" || $4 != "-" || $5 != "-") complain("'-' in some fields only")
        next
    }
    if ($2 == "-inf") complain("a decode without a path")
    length_ = split($3, decode, " ")
    if (split($5, column, ";") != length_) { complain("table and decode lengths differ"); next }
    segments = ""
    for (i = 1; i <= length_; i++) {
        if (split(column[i], p, ",") != n) { complain("position " i ": not one value per state"); next }
        sum = 0; best = 1
        for (q = 1; q <= n; q++) {
            sum += p[q]
            if (p[q] + 0 > p[best] + 0) best = q
        }
        if (sum - 1 > tol || 1 - sum > tol) complain("position " i " sums to " sum)
        if (decode[i] != state[best]) complain("position " i ": decode " decode[i] ", highest " state[best])
        if (i == 1 || decode[i] != decode[i - 1]) {
            if (i > 1 && first < i - 1) segments = segments "-" (i - 1)
            segments = segments (i > 1 ? " " : "") decode[i] ":" i
            first = i
        }
    }
    if (first < length_) segments = segments "-" length_
    if (segments != $4) complain("segments '" $4 "', the decode's runs are '" segments "'")
}
END { exit bad > 0 || rows == 0 }
