/* emit.h: the emitter shared by the backends: it owns the output file,
 * indentation and the spelling of numbers, so that generated code is
 * readable and every backend writes C the same way. */
#ifndef HMMC_EMIT_H
#define HMMC_EMIT_H

#include <stdio.h>

typedef struct Emitter {
    FILE *out;
    int indent; /* in levels of four spaces */
} Emitter;

/* One line at the current indentation (printf-style, no newline needed). */
void emit_line(Emitter *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A line ending in '{', then one level deeper. */
void emit_open(Emitter *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* One level up, then a line "}" followed by `tail` (e.g. ";" or ""). */
void emit_close(Emitter *e, const char *tail);
void emit_blank(Emitter *e);
/* A block comment, wrapped at the current indentation. */
void emit_comment(Emitter *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A double as a C literal that reads back as v exactly, in the fewest
 * significant digits (%g): 0.95, -INFINITY, 1.0 (written into buf, which must
 * hold 32 bytes). */
const char *emit_double(char buf[32], double v);
/* A C string literal for s, of any length (quotes and escapes added), into a
 * buffer of the emitter's valid until the next call. */
const char *emit_string(const char *s);

/* Writes generated C text to out with its long tables and sums wrapped: a
 * line longer than EMIT_WRAP_WIDTH breaks after every EMIT_WRAP_VALUES-th
 * ", " outside parentheses and every EMIT_WRAP_VALUES-th " + " (never in
 * strings, character constants or comments), the rest of the line indented
 * one level deeper. Only white space changes; preprocessor lines are written
 * as they are. 0, or -1 when out fails. */
enum { EMIT_WRAP_WIDTH = 160, EMIT_WRAP_VALUES = 8 };
int emit_wrap(FILE *out, const char *text, size_t len);

#endif
