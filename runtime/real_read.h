/* real_read.h: the reader of real observations in text form (real_read.c),
 * for programs whose models have `alphabet real[D];`. */
#ifndef HMMRT_REAL_READ_H
#define HMMRT_REAL_READ_H

#include <stddef.h>
#include <stdint.h>

typedef struct hmmrt_real_seq {
    char *name;
    double *obs;    /* length x D values */
    int64_t length; /* observations */
    long line;      /* of its '>' line */
} hmmrt_real_seq;

typedef struct hmmrt_real_file {
    hmmrt_real_seq *seqs;
    int64_t n;
    int out_of_memory; /* the error was a failed allocation */
    long error_line;   /* the line of the error, 0 when none (or the file could not be read) */
} hmmrt_real_file;

/* Reads a whole file ("-": standard input) of sequences of observations of
 * D reals (text, or NumPy .npy / .npz by their first bytes) into f: 0, or -1 with the error (FILE:LINE: sequence NAME,
 * observation I: what is wrong) in err and the sequences before the one in
 * error (whole) kept in f. */
int hmmrt_real_read(const char *path, int D, hmmrt_real_file *f, char *err, size_t errlen);
void hmmrt_real_free(hmmrt_real_file *f);

/* NumPy input (real_npy.c), which hmmrt_real_read recognises by content. */
int hmmrt_is_npy(const unsigned char *data, size_t len);
int hmmrt_is_npz(const unsigned char *data, size_t len);
/* Appends the sequence of one .npy array (named `name`) to f: 0, or -1
 * with the error (naming path, the sequence and the observation) in err. */
int hmmrt_npy_read(const char *path, const char *name, const unsigned char *data, size_t len,
                   int D, hmmrt_real_file *f, char *err, size_t errlen);
/* Appends every array of a .npz archive (stored, not compressed), in order. */
int hmmrt_npz_read(const char *path, const unsigned char *data, size_t len, int D,
                   hmmrt_real_file *f, char *err, size_t errlen);

#endif
