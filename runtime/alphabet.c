/* alphabet.c: maps residues to symbol indexes (hmmrt_map) through a 256-entry
 * table per alphabet, cached per thread, and shows symbols, and names and
 * other text from the input, in messages (control bytes escaped). */
#include "internal.h"

#include <stdio.h>
#include <string.h>

enum {
    NOT_IN_ALPHABET = 0xFF, /* a code no alphabet reaches: at most 255 symbols */
    CACHED_ALPHABETS = 8
};

typedef struct symbol_table {
    char alphabet[256]; /* the alphabet it was built from; "" while unused */
    uint8_t code[256];  /* byte -> index, NOT_IN_ALPHABET when absent */
} symbol_table;

/* Per thread, so that threads never wait on one another; compared by
 * content, so a reused pointer never finds a stale table. */
static _Thread_local symbol_table cached_tables[CACHED_ALPHABETS];
static _Thread_local unsigned next_to_replace;

static void build_table(symbol_table *t, const char *alphabet)
{
    memset(t->code, NOT_IN_ALPHABET, sizeof t->code);
    size_t n = strlen(alphabet);
    for (size_t i = n; i-- > 0;) /* backwards: the first of duplicates wins */
        t->code[(unsigned char)alphabet[i]] = (uint8_t)i;
    memcpy(t->alphabet, alphabet, n + 1);
}

static const symbol_table *table_for(const char *alphabet)
{
    for (int i = 0; i < CACHED_ALPHABETS; i++)
        if (cached_tables[i].alphabet[0] && strcmp(cached_tables[i].alphabet, alphabet) == 0)
            return &cached_tables[i];
    symbol_table *t = &cached_tables[next_to_replace++ % CACHED_ALPHABETS];
    build_table(t, alphabet);
    return t;
}

int64_t hmmrt_map(const char *alphabet, const char *residues, int64_t length, uint8_t *codes)
{
    if (strlen(alphabet) >= sizeof cached_tables[0].alphabet)
        return length > 0 ? 0 : -1; /* cannot happen: codes are bytes */
    const uint8_t *code = table_for(alphabet)->code;
    const unsigned char *r = (const unsigned char *)residues;
    int64_t i = 0;
    for (; i + 8 <= length; i += 8) { /* 8 at a time; a byte 0xFF among them stops it */
        uint8_t c[8];
        for (int k = 0; k < 8; k++)
            c[k] = code[r[i + k]];
        uint64_t w;
        memcpy(&w, c, 8);
        if (((~w - 0x0101010101010101u) & w & 0x8080808080808080u) != 0)
            break; /* a symbol outside: found below */
        memcpy(codes + i, c, 8);
    }
    for (; i < length; i++) {
        uint8_t c = code[(unsigned char)residues[i]];
        if (c == NOT_IN_ALPHABET)
            return i;
        codes[i] = c;
    }
    return -1;
}

void hmmrt_describe_byte(char out[8], unsigned char c)
{
    if (c >= 0x20 && c < 0x7f)
        snprintf(out, 8, "%c", c);
    else
        snprintf(out, 8, "\\x%02X", c);
}

void hmmrt_describe_alphabet(hmmrt_buf *b, const char *alphabet)
{
    hmmrt_buf_putc(b, '[');
    for (const char *p = alphabet; *p; p++) {
        char shown[8];
        hmmrt_describe_byte(shown, (unsigned char)*p);
        if (p != alphabet)
            hmmrt_buf_puts(b, ", ");
        hmmrt_buf_puts(b, shown);
    }
    hmmrt_buf_putc(b, ']');
}

void hmmrt_describe_text(hmmrt_buf *b, const char *text)
{
    const char *run = text;
    for (const char *p = text;; p++) {
        unsigned char c = (unsigned char)*p;
        if (c >= 0x20 && c != 0x7f)
            continue;
        hmmrt_buf_append(b, run, (size_t)(p - run));
        if (!c)
            return;
        char shown[8];
        hmmrt_describe_byte(shown, c);
        hmmrt_buf_puts(b, shown);
        run = p + 1;
    }
}
