/* program.c: the generated .c of the program under test (HMMC_PROGRAM, its
 * path), built into the harness so that the kernels run through the
 * program's own table of GPU calls: its main becomes hmmc_program_main, and
 * the hmmrt_main it calls with its hmmrt_program is the harness's
 * (hmmc_emulated_main, harness.cpp). */
#define main hmmc_program_main
#define hmmrt_main hmmc_emulated_main
#include HMMC_PROGRAM
