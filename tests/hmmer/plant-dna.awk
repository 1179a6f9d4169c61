# plant-dna.awk: n random DNA sequences of 2,000 to 5,999 bases (each base
# 1/4), every second one with a homolog (one of the FASTA records read,
# hmmemit's) planted inside: whole or a fragment of 30 bases and more, on
# the top strand or, every second time, reverse complemented; named
# dnaK_STRAND_FROM-TO (where it lies, 1-based). Sequence 3 has a run of 30
# N and sequence 5 is in lower case, both with a plant (IUPAC codes and case
# as nhmmer reads them). awk -v seed=S -v n=N -f plant-dna.awk homologs.fa
# (tests/hmmer/strands).
BEGIN { srand(seed); split("A C G T", nt, " "); comp["A"] = "T"; comp["C"] = "G"; comp["G"] = "C"; comp["T"] = "A" }
/^>/ { nh++; next }
{ hom[nh] = hom[nh] toupper($0) }
function random_dna(n,   s, i) { s = ""; for (i = 0; i < n; i++) s = s nt[1 + int(rand() * 4)]; return s }
function revcomp(s,   r, i) { r = ""; for (i = length(s); i >= 1; i--) r = r comp[substr(s, i, 1)]; return r }
END {
    for (k = 1; k <= n; k++) {
        s = random_dna(2000 + int(rand() * 4000))
        name = "dna" k
        if (k == 3) { at = 1 + int(rand() * 1000); s = substr(s, 1, at - 1) "NNNNNNNNNNNNNNNNNNNNNNNNNNNNNN" substr(s, at + 30) }
        if (k % 2 == 1 && nh > 0) {
            h = hom[1 + int(rand() * nh)]
            if (k % 4 == 3) {
                len = 30 + int(rand() * (length(h) - 29))
                h = substr(h, 1 + int(rand() * (length(h) - len + 1)), len)
            }
            strand = (k % 8 < 4) ? "plus" : "minus"
            if (strand == "minus") h = revcomp(h)
            at = 1500 + int(rand() * (length(s) - 1500))
            s = substr(s, 1, at - 1) h substr(s, at)
            name = "dna" k "_" strand "_" at "-" (at + length(h) - 1)
        }
        if (k == 5) s = tolower(s)
        print ">" name
        for (i = 1; i <= length(s); i += 60) print substr(s, i, 60)
    }
}
