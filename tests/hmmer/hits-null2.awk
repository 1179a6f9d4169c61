# hits-null2.awk: hmmsearch --max's --tblout (first file) against hmmc's
# (second), both with null2: each sequence of E < 0.01 in one and of
# E >= 0.03 in the other (or absent) is printed ("only hmmsearch: NAME E"),
# one of 0.01 to 0.03 in the other as near; then "summary missed N near N
# common N within0.1 N worst D bias D": sequences in both, those whose
# scores are within 0.1 bits, the largest score difference, the largest
# bias difference. awk -f hits-null2.awk hmmsearch.tbl hmmc.tbl
# (tests/hmmer/hits).
function abs(x) { return x < 0 ? -x : x }
/^#/ { next }
FILENAME == ARGV[1] { e[0, $1] = $5; sc[0, $1] = $6; b[0, $1] = $7; names[$1] = 1; next }
{ e[1, $1] = $5; sc[1, $1] = $6; b[1, $1] = $7; names[$1] = 1 }
END {
    who[0] = "hmmsearch"; who[1] = "hmmc"
    for (n in names) {
        for (f = 0; f <= 1; f++) {
            if (!((f, n) in e) || e[f, n] >= 0.01) continue
            other = ((1 - f, n) in e) ? e[1 - f, n] : ""
            if (other != "" && other < 0.01) continue
            if (other != "" && other < 0.03) { near++; printf "near %s: %s E %s (other %s)\n", who[f], n, e[f, n], other }
            else { missed++; printf "only %s: %s E %s (other %s)\n", who[f], n, e[f, n], other == "" ? "none" : other }
        }
        if ((0, n) in e && (1, n) in e) {
            common++
            d = abs(sc[0, n] - sc[1, n]); if (d <= 0.1001) within++; if (d > worst) worst = d
            d = abs(b[0, n] - b[1, n]); if (d > wbias) wbias = d
        }
    }
    printf "summary missed %d near %d common %d within0.1 %d worst %.1f bias %.1f\n", missed, near, common, within, worst, wbias
}
