/* matrix.h: reading the values of a transition matrix `[ p11, p12; p21, p22 ]`
 * (ast.h: Matrix) value by value as the lexer scans them, so that the parser
 * gets the whole matrix as one token. */

/* The lexer scans a matrix in a state of its own and hands
 * each number and punctuation mark to the builder below, which checks it as
 * a weight at once and appends it to one array: a 6,000-state model's 36
 * million values cost no token for the parser, no node and no copy of their
 * text. The parser then gets the whole matrix as one token. */
#ifndef HMMC_MATRIX_H
#define HMMC_MATRIX_H

#include <stddef.h>

#include "support/arena.h"
#include "syntax/ast.h"
#include "support/diag.h"

typedef enum MatrixExpect {
    MATRIX_VALUE,       /* a value (or, at a row's start, ';' or ']') */
    MATRIX_AFTER_VALUE, /* ',', ';', ']' or, after a numerator, '/' */
    MATRIX_DENOMINATOR  /* the number after '/' */
} MatrixExpect;

/* The matrix being read. */
typedef struct MatrixBuilder {
    Arena *arena;
    Diag *diag;
    Matrix *m;
    long cap_values;
    int cap_rows;
    MatrixExpect expect;
    int after_comma;     /* a ',' was the last mark: a value must follow */
    int negative;        /* a '-' came before the number being read */
    Loc minus;           /* where */
    Number num;          /* the value being read: its numerator, */
    double num_value;    /* checked (num_ok) */
    int num_ok, is_fraction;
    Loc value_loc;       /* from its first byte to its last so far */
    double value;        /* the finished value (0 after an error) */
} MatrixBuilder;

/* A matrix starts after its '['; offset, line and column: the byte after it. */
void matrix_begin(MatrixBuilder *b, Arena *a, Diag *d, const char *source, Loc open,
                  long offset, int line, int column);
/* A number token (text[0..length), not NUL-terminated; flags say whether the
 * lexer found it malformed: the message was given). */
void matrix_number(MatrixBuilder *b, const char *text, size_t length, int malformed, Loc loc);
void matrix_minus(MatrixBuilder *b, Loc loc);
void matrix_slash(MatrixBuilder *b, Loc loc);
void matrix_comma(MatrixBuilder *b, Loc loc);
/* ';': offset, line and column of the byte after it (the next row's start). */
void matrix_semicolon(MatrixBuilder *b, Loc loc, long offset, int line, int column);
/* Anything else inside the brackets: an error. */
void matrix_unexpected(MatrixBuilder *b, Loc loc, const char *text, size_t length);
/* ']': the finished matrix. */
Matrix *matrix_end(MatrixBuilder *b, Loc close);

#endif
