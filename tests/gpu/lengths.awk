# lengths.awk: name<TAB>length of every record of a FASTA file, the name as
# the programs read it (the first word after '>'), the length without white
# space; the LENGTHS.tsv of compare.awk.
#   awk -f lengths.awk FILE.fa > LENGTHS.tsv
/^>/ { if (name != "") print name "\t" n; name = $1 == ">" ? $2 : substr($1, 2); n = 0; next }
     { gsub(/[ \t\r]/, ""); n += length($0) }
END  { if (name != "") print name "\t" n }
