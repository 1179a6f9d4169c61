/* source.h: the text of the model file hmmc compiles, mapped from the file
 * where it can be, so that the front end of a file of many models can give
 * back the pages of each model once it is lowered (source.c). */
#ifndef HMMC_SUPPORT_SOURCE_H
#define HMMC_SUPPORT_SOURCE_H

#include <stddef.h>

/* The whole file, NUL-terminated (it may hold NUL bytes too), and its length
 * in *len; NULL with a message on failure. A regular file is mapped
 * (read-only, private); anything else is read. */
char *source_load(const char *path, size_t *len);

/* The text's bytes [from, to) are not needed for now: where the text is a
 * mapping, the whole pages among them leave the process's memory (read
 * again from the file if looked at later); else nothing happens. */
void source_release(const char *src, size_t from, size_t to);

/* Frees what source_load gave. */
void source_free(char *src, size_t len);

#endif
