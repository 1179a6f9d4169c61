# plant.awk: n random proteins of 50 to 399 residues (HMMER3's background
# frequencies), every second one with a fragment of 15 to 74 residues of a
# homolog (one of the FASTA records read) planted inside, named
# plantedK_FROM-TO. awk -v seed=S -v n=N -f plant.awk homologs.fa
# (tests/hmmer/run: HMMER3's search configuration against hmmsearch).
BEGIN { srand(seed); split("A C D E F G H I K L M N P Q R S T V W Y", aa, " ")
        split("0.0787945 0.0151600 0.0535222 0.0668298 0.0397062 0.0695071 0.0229198 0.0590092 0.0594422 0.0963728 0.0237718 0.0414386 0.0482904 0.0395639 0.0540978 0.0683364 0.0540687 0.0673417 0.0114135 0.0304133", f, " ")
        for (i = 1; i <= 20; i++) { c += f[i]; cum[i] = c } }
/^>/ { nh++; next }
{ hom[nh] = hom[nh] $0 }
function residue(   u, i) { u = rand() * c; for (i = 1; i < 20; i++) if (u < cum[i]) break; return aa[i] }
function random_protein(n,   s, i) { s = ""; for (i = 0; i < n; i++) s = s residue(); return s }
END {
    for (k = 1; k <= n; k++) {
        s = random_protein(50 + int(rand() * 350))
        name = "random" k
        if (k % 2 == 0 && nh > 0) {
            h = hom[1 + int(rand() * nh)]
            len = 15 + int(rand() * 60); if (len > length(h)) len = length(h)
            from = 1 + int(rand() * (length(h) - len + 1))
            at = 1 + int(rand() * length(s))
            s = substr(s, 1, at - 1) substr(h, from, len) substr(s, at)
            name = "planted" k "_" from "-" (from + len - 1)
        }
        print ">" name
        for (i = 1; i <= length(s); i += 60) print substr(s, i, 60)
    }
}
