# numbers.awk: compares two files of hmmref output line by line, token by
# token (tokens split at tabs, spaces, ';' and ','): numbers within a relative
# tolerance `tol` (absolute below 1), everything else exactly. Prints the
# first differences and exits 1 if there are any.
# Usage: awk -v tol=1e-12 -v label=TEXT -f numbers.awk A B
function is_number(x) { return x ~ /^-?[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?$/ }
function differ(a, b,    d, scale) {
    if (!is_number(a) || !is_number(b))
        return a != b
    d = a - b; if (d < 0) d = -d
    scale = a < 0 ? -a : a
    if ((b < 0 ? -b : b) > scale) scale = b < 0 ? -b : b
    if (scale < 1) scale = 1
    return d > tol * scale
}
FNR == NR { want[FNR] = $0; rows = FNR; next }
{
    got = FNR
    na = split(want[FNR], a, /[\t ;,]/)
    nb = split($0, b, /[\t ;,]/)
    if (na != nb) { complain("line " FNR ": " na " tokens, " nb " in the other"); next }
    for (i = 1; i <= na; i++)
        if (differ(a[i], b[i])) { complain("line " FNR " token " i ": " a[i] " vs " b[i]); next }
}
function complain(text) { if (++bad <= 5) print label ": " text }
END {
    if (got != rows) complain(rows " lines against " got)
    exit bad > 0
}
