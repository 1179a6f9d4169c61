/* fasta_map.c: the one-pass reader's inner loop: the lines of a sequence
 * mapped to an alphabet's codes as they go into the parse's store
 * (fasta_parse.c), instead of a copy of the residues and a second pass that
 * maps them. Where the CPU has AVX2, 32 bytes at a time (a shuffle for each
 * high half-byte that holds symbols), the first marked byte (a line end,
 * blank or byte outside) found in the mapped vector; else each line found
 * with memchr and mapped 8 bytes at a time through the 256-entry table. A
 * line with a blank or a byte outside is mapped byte by byte from there,
 * which leaves out blanks and notes the first byte outside. CRLF is one line
 * end; a '\r' alone goes back to the state machine, and lines after it are
 * mapped byte by byte. */
#include "fasta_parse.h"

#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_AVX2_PATH 1
#endif

void fasta_map_table(fasta_map *map, const char *alphabet)
{
    memset(map, 0, sizeof *map);
    memset(map->code, FASTA_MAP_INVALID, sizeof map->code);
    size_t n = strlen(alphabet);
    for (size_t i = n; i-- > 0;) /* backwards: the first of duplicates wins, as hmmrt_map's */
        map->code[(unsigned char)alphabet[i]] = (uint8_t)i;
    /* the parse leaves blanks out and ends lines whatever the alphabet */
    map->code[' '] = map->code['\t'] = map->code['\v'] = map->code['\f'] = FASTA_MAP_BLANK;
    map->code['\n'] = map->code['\r'] = FASTA_MAP_LINE_END;
    /* a table for each high half-byte below 0x80 that holds a code; bytes
     * of the others come out marked, and their line is mapped byte by byte */
    for (int hi = 0; hi < 8; hi++) {
        int useful = 0;
        for (int lo = 0; lo < 16; lo++)
            useful |= map->code[hi * 16 + lo] < 0x80;
        if (!useful)
            continue;
        int t = map->n_nibbles++;
        map->nibble[t] = (uint8_t)hi;
        for (int lo = 0; lo < 16; lo++)
            map->table[t][lo] = map->table[t][lo + 16] = map->code[hi * 16 + lo];
    }
}

/* Maps n bytes into out through the 256-entry table, 8 at a time; 1 when
 * one of them is marked (its code has the top bit: a blank, a line end or
 * a byte outside). */
static int map_bytes(const uint8_t *code, const unsigned char *in, size_t n, uint8_t *out)
{
    uint64_t marked = 0;
    size_t k = 0;
    for (; k + 8 <= n; k += 8) {
        uint64_t w;
        memcpy(&w, in + k, 8);
        uint64_t c = (uint64_t)code[w & 0xff] | (uint64_t)code[(w >> 8) & 0xff] << 8 |
                     (uint64_t)code[(w >> 16) & 0xff] << 16 |
                     (uint64_t)code[(w >> 24) & 0xff] << 24 |
                     (uint64_t)code[(w >> 32) & 0xff] << 32 |
                     (uint64_t)code[(w >> 40) & 0xff] << 40 |
                     (uint64_t)code[(w >> 48) & 0xff] << 48 | (uint64_t)code[w >> 56] << 56;
        memcpy(out + k, &c, 8);
        marked |= c;
    }
    for (; k < n; k++) {
        out[k] = code[in[k]];
        marked |= out[k];
    }
    return (marked & 0x8080808080808080u) != 0;
}

/* The rest of a line from at, byte by byte, into *out: blanks left out,
 * the first byte outside noted; stops at a line end or stop. */
static const char *map_slowly(fasta_parse *p, uint8_t **out, const char *at, const char *stop)
{
    const uint8_t *code = p->map->code;
    uint8_t *o = *out;
    for (; at < stop; at++) {
        uint8_t c = code[(unsigned char)*at];
        if (c < 0x80) {
            *o++ = c;
            continue;
        }
        if (c == FASTA_MAP_BLANK)
            continue;
        if (c == FASTA_MAP_LINE_END)
            break;
        if (!p->first_invalid) {
            p->first_invalid = (int64_t)((size_t)(o - (uint8_t *)p->store) - p->residues_at) + 1;
            p->invalid_byte = (unsigned char)*at;
        }
        *o++ = FASTA_MAP_INVALID;
    }
    *out = o;
    return at;
}

/* At a line end (at < end): a '\n' or a CRLF ends the line, and the lines
 * go on unless the next starts a record, is blank or is past end; a '\r'
 * alone (or the last byte before end) goes back to the state machine, and
 * after a '\r' alone lines are mapped byte by byte. Returns 1 to go on, 0
 * to return at *at. */
static inline __attribute__((always_inline)) int line_end(fasta_parse *p, const char **at,
                                                         const char *end)
{
    if (**at == '\r') {
        if (*at + 1 == end)
            return 0;
        if ((*at)[1] != '\n') {
            p->saw_cr = 1;
            return 0;
        }
        ++*at; /* a CRLF: its '\n' ends the line */
    }
    if (fasta_parse_end_line(p) != 0)
        return 0;
    p->line++;
    const char *next = ++*at;
    if (next == end || *next == '>' || *next == '\n' || *next == '\r') {
        p->state = FASTA_AT_LINE_START;
        return 0;
    }
    return 1;
}

/* Each line found with memchr (at most LINE_CHUNK bytes at a time, so that
 * a file of '\r' line ends costs no more than a chunk a line before it is
 * known), mapped 8 bytes at a time, again byte by byte where one is marked. */
enum { LINE_CHUNK = 4096 };
static const char *lines_by_table(fasta_parse *p, const char *at, const char *end)
{
    uint8_t *out = (uint8_t *)p->store + p->store_len;
    for (;;) {
        size_t span = (size_t)(end - at) < LINE_CHUNK ? (size_t)(end - at) : LINE_CHUNK;
        const char *newline = p->saw_cr ? NULL : memchr(at, '\n', span);
        const char *stop = newline ? newline : at + span;
        if (!p->saw_cr && !map_bytes(p->map->code, (const unsigned char *)at,
                                     (size_t)(stop - at), out)) {
            out += stop - at;
            at = stop;
        } else {
            at = map_slowly(p, &out, at, stop);
        }
        p->store_len = (size_t)(out - (uint8_t *)p->store);
        if (at == end)
            return at;
        if (at == stop && *at != '\n' && *at != '\r')
            continue; /* a long line goes on */
        if (!line_end(p, &at, end))
            return at;
    }
}

#ifdef HAVE_AVX2_PATH
/* The same 32 bytes at a time while 32 are left: each vector mapped and
 * stored whole, then out and at moved to its first marked byte, if any. */
__attribute__((target("avx2"))) static const char *lines_avx2(fasta_parse *p, const char *at,
                                                              const char *end)
{
    const fasta_map *map = p->map;
    __m256i tables[8], nibbles[8];
    for (int t = 0; t < map->n_nibbles; t++) {
        tables[t] = _mm256_loadu_si256((const __m256i *)map->table[t]);
        nibbles[t] = _mm256_set1_epi8((char)map->nibble[t]);
    }
    const int n_tables = map->n_nibbles;
    const __m256i low = _mm256_set1_epi8(0x0f), marks = _mm256_set1_epi8((char)0xff);
    /* the store has room for end - at more bytes, and out never runs ahead
     * of at: a vector may be written whole wherever one may be read */
    uint8_t *out = (uint8_t *)p->store + p->store_len;
    while (!p->saw_cr && end - at >= 32) {
        __m256i b = _mm256_loadu_si256((const __m256i *)at);
        __m256i lo = _mm256_and_si256(b, low);
        __m256i hi = _mm256_and_si256(_mm256_srli_epi16(b, 4), low);
        __m256i c = marks; /* stays for bytes of no table's half-byte (from 0x80 too) */
        for (int t = 0; t < n_tables; t++)
            c = _mm256_blendv_epi8(c, _mm256_shuffle_epi8(tables[t], lo),
                                   _mm256_cmpeq_epi8(hi, nibbles[t]));
        _mm256_storeu_si256((__m256i *)out, c);
        uint32_t marked = (uint32_t)_mm256_movemask_epi8(c);
        if (!marked) {
            out += 32;
            at += 32;
            continue;
        }
        int first = __builtin_ctz(marked);
        out += first;
        at += first;
        if (*at != '\n') /* a blank, '\r' or byte outside: the rest of the line */
            at = map_slowly(p, &out, at, end);
        p->store_len = (size_t)(out - (uint8_t *)p->store);
        if (at == end || !line_end(p, &at, end))
            return at;
    }
    p->store_len = (size_t)(out - (uint8_t *)p->store);
    return lines_by_table(p, at, end);
}

static int have_avx2(void)
{
    return __builtin_cpu_supports("avx2"); /* a flag libgcc sets once, at start */
}
#endif

const char *fasta_map_lines(fasta_parse *p, const char *at, const char *end)
{
#ifdef HAVE_AVX2_PATH
    if (have_avx2())
        return lines_avx2(p, at, end);
#endif
    return lines_by_table(p, at, end);
}
