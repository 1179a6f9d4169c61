# hits-domains.awk: measures how hmmc's --domtblout (first file) agrees with
# hmmsearch's (second file) for tests/hmmer/hits: over the sequences both
# report with a full-sequence E-value below -v below=X, how many have the same
# number of domains, and how many of hmmsearch's domains hmmc has with
# alignment ends within -v slack=N residues (each of ours matched once).
# Prints "sequences N same_count N domains N matched N ours N".
function abs(x) { return x < 0 ? -x : x }
FNR == 1 { file++ }
/^#/ { next }
$7 + 0 >= below { next }
file == 1 { n = ++on[$1]; of[$1, n] = $18; ot[$1, n] = $19; next }
file == 2 { n = ++tn[$1]; tf[$1, n] = $18; tt[$1, n] = $19 }
END {
    for (s in tn) {
        if (!(s in on)) continue
        seqs++
        if (on[s] == tn[s]) same++
        ours += on[s]
        for (i = 1; i <= tn[s]; i++) {
            domains++
            for (j = 1; j <= on[s]; j++)
                if (!used[s, j] && abs(of[s, j] - tf[s, i]) <= slack && abs(ot[s, j] - tt[s, i]) <= slack) {
                    used[s, j] = 1; matched++; break
                }
        }
    }
    printf "sequences %d same_count %d domains %d matched %d ours %d\n", seqs, same, domains, matched, ours
}
