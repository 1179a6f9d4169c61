/* cli.c: the command line of generated programs: parses the options into an
 * hmmrt_options, and writes --help and --version. */
#include "internal.h"
#include "hmmrt_scan.h"

#include "hmmrt_gpu.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* Options given that only --sample uses, for the check that --sample is there. */
typedef struct sample_only {
    const char *first; /* name of the first one seen, NULL if none */
} sample_only;

typedef struct parse_state {
    const hmmrt_program *prog;
    hmmrt_options *o;
    sample_only sample_only;
    const char *train_only; /* the first option seen that only --train uses */
    int model_given;        /* --model (--sample and --train use it) */
    const char *dom_E_given; /* --domE or --incdomE (a DNA model has no domain thresholds) */
} parse_state;

typedef int (*apply_fn)(parse_state *st, const char *value);

typedef struct option_spec {
    const char *name;
    const char *value_name; /* NULL for a flag */
    apply_fn apply;
} option_spec;

static int usage_error(const char *fmt, ...) HMMRT_PRINTF(1, 2);
static int usage_error(const char *fmt, ...)
{
    char what[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    hmmrt_error("%s", what);
    return HMMRT_EXIT_USAGE;
}

/* Parses a whole decimal number in [min, max]; 0, or -1. */
static int parse_number(const char *text, long long min, long long max, long long *out)
{
    if (!*text || *text == ' ' || *text == '+')
        return -1;
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || *end || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

static int parse_seed(const char *text, uint64_t *out)
{
    if (*text < '0' || *text > '9')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno || *end)
        return -1;
    *out = (uint64_t)v;
    return 0;
}

static int bad_value(const char *option, const char *expected, const char *value)
{
    return usage_error("--%s takes %s, not '%s'", option, expected, value);
}

static int note_sample_only(parse_state *st, const char *name)
{
    if (!st->sample_only.first)
        st->sample_only.first = name;
    return 0;
}

static int apply_help(parse_state *st, const char *v) { st->o->help = 1; return 0; }
static int apply_version(parse_state *st, const char *v) { st->o->version = 1; return 0; }
static int apply_skip_invalid(parse_state *st, const char *v) { st->o->skip_invalid = 1; return 0; }
static int apply_no_header(parse_state *st, const char *v) { st->o->header = 0; return 0; }
static int apply_progress(parse_state *st, const char *v) { st->o->progress = HMMRT_PROGRESS_ON; return 0; }
static int apply_no_progress(parse_state *st, const char *v) { st->o->progress = HMMRT_PROGRESS_OFF; return 0; }

enum { MAX_THREADS = 4096 };

static int apply_threads(parse_state *st, const char *v)
{
    long long n;
    if (parse_number(v, 1, MAX_THREADS, &n) != 0)
        return bad_value("threads", "a number of threads from 1 to 4096", v);
    st->o->threads = (int)n;
    return 0;
}

static int apply_scan(parse_state *st, const char *v)
{
    if (hmmrt_scan_set_mode(v) != 0)
        return bad_value("scan", "on, off or auto", v);
    return 0;
}

static int apply_decimals(parse_state *st, const char *v)
{
    long long n;
    if (parse_number(v, 0, 17, &n) != 0)
        return bad_value("decimals", "a whole number from 0 to 17", v);
    st->o->decimals = (int)n;
    return 0;
}

static int apply_sample(parse_state *st, const char *v)
{
    long long n;
    if (parse_number(v, 1, LONG_MAX, &n) != 0)
        return bad_value("sample", "a number of sequences, 1 or more", v);
    st->o->sample = (long)n;
    return 0;
}

static int apply_length(parse_state *st, const char *v)
{
    long long n;
    if (parse_number(v, 0, INT64_MAX, &n) != 0)
        return bad_value("length", "a number of symbols, 0 or more (0: until the end state)", v);
    st->o->length = n;
    return note_sample_only(st, "--length");
}

static int apply_seed(parse_state *st, const char *v)
{
    if (parse_seed(v, &st->o->seed) != 0)
        return bad_value("seed", "a whole number from 0 to 18446744073709551615", v);
    return note_sample_only(st, "--seed");
}

static int apply_with_path(parse_state *st, const char *v)
{
    st->o->with_path = 1;
    return note_sample_only(st, "--with-path");
}

static int apply_model(parse_state *st, const char *v)
{
    const hmmrt_program *prog = st->prog;
    for (int m = 0; m < prog->n_models; m++)
        if (strcmp(prog->models[m].name, v) == 0) {
            st->o->model = m;
            st->model_given = 1;
            return 0;
        }
    hmmrt_buf names = {0};
    for (int m = 0; m < prog->n_models; m++) {
        hmmrt_buf_puts(&names, m ? ", " : "");
        hmmrt_buf_puts(&names, prog->models[m].name);
    }
    int status = usage_error("no model is named '%s': the models are %s", v,
                             names.len ? names.data : "(none)");
    hmmrt_buf_free(&names);
    return status;
}

/* --device and --double choose how the GPU scores: a C-target program has none. */
static int needs_gpu_target(parse_state *st, const char *option)
{
    if (st->prog->gpu)
        return 0;
    return usage_error("%s applies only to programs built for the GPU; this one was built for "
                       "the C target (rebuild with hmmc --target=cuda)",
                       option);
}

static int apply_cpu(parse_state *st, const char *v) { st->o->cpu = 1; return 0; }
static int apply_timing(parse_state *st, const char *v) { st->o->timing = 1; return 0; }

static int apply_device(parse_state *st, const char *v)
{
    if (needs_gpu_target(st, "--device") != 0)
        return HMMRT_EXIT_USAGE;
    long long n;
    if (parse_number(v, 0, 1023, &n) != 0)
        return bad_value("device", "a GPU number from 0 to 1023", v);
    st->o->device = (int)n;
    st->o->device_given = 1;
    return 0;
}

/* --devices all|N,M,...: several GPUs of this host (gpu_multi.c). */
static int apply_devices(parse_state *st, const char *v)
{
    if (needs_gpu_target(st, "--devices") != 0)
        return HMMRT_EXIT_USAGE;
    if (strcmp(v, "all") == 0) {
        st->o->n_devices = -1;
        return 0;
    }
    const char *expected = "'all' or a list of GPU numbers from 0 to 1023, each once, such as 0,1";
    int n = 0;
    for (const char *p = v;; p++) {
        char number[8];
        size_t len = strcspn(p, ",");
        long long d;
        if (len == 0 || len >= sizeof number || n == HMMRT_MAX_DEVICES)
            return bad_value("devices", expected, v);
        memcpy(number, p, len);
        number[len] = '\0';
        if (parse_number(number, 0, 1023, &d) != 0)
            return bad_value("devices", expected, v);
        for (int k = 0; k < n; k++)
            if (st->o->devices[k] == (int)d)
                return bad_value("devices", expected, v);
        st->o->devices[n++] = (int)d;
        p += len;
        if (!*p)
            break;
    }
    st->o->n_devices = n;
    return 0;
}

static int apply_output(parse_state *st, const char *v)
{
    if (!*v)
        return bad_value("output", "the name of the file to write the table to", v);
    st->o->output = v;
    return 0;
}

static int apply_double(parse_state *st, const char *v)
{
    if (needs_gpu_target(st, "--double") != 0)
        return HMMRT_EXIT_USAGE;
    st->o->use_double = 1;
    return 0;
}

static int note_train_only(parse_state *st, const char *name)
{
    if (!st->train_only)
        st->train_only = name;
    return 0;
}

static int apply_train(parse_state *st, const char *v) { st->o->train = 1; return 0; }

static int apply_iterations(parse_state *st, const char *v)
{
    long long n;
    if (parse_number(v, 0, LONG_MAX, &n) != 0)
        return bad_value("iterations", "a whole number of iterations, 0 or more", v);
    st->o->iterations = (long)n;
    return note_train_only(st, "--iterations");
}

/* A finite number >= 0 written in full (no hex, no inf or nan). */
static int parse_real(const char *text, double *out)
{
    if (!*text || strpbrk(text, "xXnN") || *text == ' ')
        return -1;
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || *end || !isfinite(v) || v < 0)
        return -1;
    *out = v;
    return 0;
}

static int apply_tolerance(parse_state *st, const char *v)
{
    if (parse_real(v, &st->o->tolerance) != 0)
        return bad_value("tolerance", "a number 0 or more (e.g. 1e-9)", v);
    return note_train_only(st, "--tolerance");
}

static int apply_pseudocount(parse_state *st, const char *v)
{
    if (parse_real(v, &st->o->pseudocount) != 0)
        return bad_value("pseudocount", "a number 0 or more (e.g. 1)", v);
    return note_train_only(st, "--pseudocount");
}

static int apply_min_variance(parse_state *st, const char *v)
{
    if (parse_real(v, &st->o->min_variance) != 0)
        return bad_value("min-variance", "a number 0 or more (e.g. 1e-3)", v);
    return note_train_only(st, "--min-variance");
}

static int apply_viterbi_training(parse_state *st, const char *v)
{
    st->o->viterbi_training = 1;
    return note_train_only(st, "--viterbi-training");
}

static int apply_make_db(parse_state *st, const char *v)
{
    if (!*v)
        return bad_value("make-db", "the name of the database file to write", v);
    st->o->make_db = v;
    return 0;
}

/* ---- the hits mode (hmmsearch's option names; docs/hmmer.md) ---------------- */

/* Notes the first hits option; the program must have a hits mode. */
static int note_hits(parse_state *st, const char *name)
{
    const hmmrt_hits_info *h = st->prog->hits;
    if (!h)
        return usage_error("%s applies only to a program imported from a HMMER3 file (hmmc "
                           "--import-hmmer FILE > MODEL.hmm): its source's `// hmmer:` header "
                           "lines give the E-value statistics, and %s has none", name,
                           st->prog->source);
    if (h->refused)
        return usage_error("%s: this program has no hits mode: %s", name, h->refused);
    if (!st->o->hits.first)
        st->o->hits.first = name;
    return 0;
}

/* Any real number written in full (a score threshold may be negative). */
static int parse_any_real(const char *text, double *out)
{
    if (*text == '-')
        return parse_real(text + 1, out) == 0 ? (*out = -*out, 0) : -1;
    return parse_real(text, out);
}

static int positive(const char *option, const char *what, const char *v, double *out)
{
    if (parse_real(v, out) != 0 || *out <= 0)
        return usage_error("%s takes %s above 0 (e.g. %s), not '%s'", option, what,
                           strstr(what, "megabases") ? "100"
                           : strchr(option, 'Z')     ? "1000000"
                                                     : "0.01", v);
    return 0;
}

static int score(const char *option, const char *v, double *out)
{
    if (parse_any_real(v, out) != 0)
        return usage_error("%s takes a score in bits (e.g. 25 or -3.5), not '%s'", option, v);
    return 0;
}

static int apply_hits(parse_state *st, const char *v) { return note_hits(st, "--hits"); }

static int apply_tblout(parse_state *st, const char *v)
{
    if (!*v)
        return bad_value("tblout", "the name of the table file to write", v);
    st->o->hits.tblout = v;
    return note_hits(st, "--tblout");
}

static int apply_domtblout(parse_state *st, const char *v)
{
    if (!*v)
        return bad_value("domtblout", "the name of the table file to write", v);
    if (note_hits(st, "--domtblout") != 0)
        return HMMRT_EXIT_USAGE;
    if (st->prog->hits->traceback_column < 0 && st->prog->hits->n_queries < 2)
        return usage_error("--domtblout needs the domains, from the viterbi traceback of the "
                           "searched model, and this program's main prints none: add `print "
                           "viterbi(MODEL).traceback;` as --import-hmmer writes it");
    st->o->hits.domtblout = v;
    return 0;
}

static int apply_E(parse_state *st, const char *v)
{
    hmmrt_hits_options *h = &st->o->hits;
    return note_hits(st, "-E") || positive("-E", "an E-value", v, &h->E);
}

static int apply_T(parse_state *st, const char *v)
{
    hmmrt_hits_options *h = &st->o->hits;
    h->by_E = 0;
    return note_hits(st, "-T") || score("-T", v, &h->T);
}

static int apply_Z(parse_state *st, const char *v)
{
    hmmrt_hits_options *h = &st->o->hits;
    h->Z_set = 1;
    if (note_hits(st, "-Z") != 0)
        return HMMRT_EXIT_USAGE;
    return positive("-Z", st->prog->hits->nucleic ? "a database size in megabases (nhmmer's -Z)"
                                                  : "a number of sequences", v, &h->Z);
}

static int apply_domZ(parse_state *st, const char *v)
{
    hmmrt_hits_options *h = &st->o->hits;
    h->domZ_set = 1;
    return note_hits(st, "--domZ") || positive("--domZ", "a number of sequences", v, &h->domZ);
}

static int apply_domE(parse_state *st, const char *v)
{
    hmmrt_hits_options *h = &st->o->hits;
    st->dom_E_given = "--domE";
    return note_hits(st, "--domE") || positive("--domE", "an E-value", v, &h->domE);
}

static int apply_domT(parse_state *st, const char *v)
{
    hmmrt_hits_options *h = &st->o->hits;
    h->dom_by_E = 0;
    return note_hits(st, "--domT") || score("--domT", v, &h->domT);
}

static int apply_incE(parse_state *st, const char *v)
{
    hmmrt_hits_options *h = &st->o->hits;
    return note_hits(st, "--incE") || positive("--incE", "an E-value", v, &h->incE);
}

static int apply_incT(parse_state *st, const char *v)
{
    hmmrt_hits_options *h = &st->o->hits;
    h->inc_by_E = 0;
    return note_hits(st, "--incT") || score("--incT", v, &h->incT);
}

static int apply_incdomE(parse_state *st, const char *v)
{
    hmmrt_hits_options *h = &st->o->hits;
    st->dom_E_given = "--incdomE";
    return note_hits(st, "--incdomE") || positive("--incdomE", "an E-value", v, &h->incdomE);
}

static int apply_incdomT(parse_state *st, const char *v)
{
    hmmrt_hits_options *h = &st->o->hits;
    h->incdom_by_E = 0;
    return note_hits(st, "--incdomT") || score("--incdomT", v, &h->incdomT);
}

/* --cut_ga, --cut_tc, --cut_nc: the file's cutoffs, which it must have. */
static int apply_cut(parse_state *st, int which, const char *option)
{
    static const char *const keys[3] = {"GA", "TC", "NC"};
    static const char *const what[3] = {"gathering", "trusted", "noise"};
    if (note_hits(st, option) != 0)
        return HMMRT_EXIT_USAGE;
    hmmrt_hits_options *h = &st->o->hits;
    if (h->cut != HMMRT_CUT_NONE && h->cut != which)
        return usage_error("--cut_%c%c and %s do not go together: choose one cutoff",
                           keys[h->cut][0] + 32, keys[h->cut][1] + 32, option);
    const hmmrt_hits_info *hits = st->prog->hits;
    int n = hits->n_queries > 1 ? hits->n_queries : 1; /* many models: each its own cutoff */
    for (int k = 0; k < n; k++) {
        const hmmrt_hits_info *info = &hits[k];
        if (!info->has_cut[which] && n > 1)
            return usage_error("%s: model %d of %d, %s, has no %s cutoff (its HMMER file has no "
                               "%s line; hmmsearch stops there too): give a score threshold "
                               "with -T and --domT instead, or import the models that have "
                               "one", option, k + 1, n, info->query, what[which], keys[which]);
        if (!info->has_cut[which])
            return usage_error("%s: the model %s has no %s cutoff (its HMMER file has no %s "
                               "line; the source's `// hmmer: %s` line is missing): give a "
                               "score threshold with -T and --domT instead", option,
                               info->query, what[which], keys[which], keys[which]);
    }
    h->cut = which;
    return 0;
}

/* --watson, --crick: one strand of a nucleic model's targets (nhmmer's options). */
static int apply_strand(parse_state *st, int strand, const char *option)
{
    if (note_hits(st, option) != 0)
        return HMMRT_EXIT_USAGE;
    const hmmrt_hits_info *info = st->prog->hits;
    if (!info->nucleic)
        return usage_error("%s: the model %s is not a DNA or RNA model, so its targets have no "
                           "strands: drop %s", option, info->query, option);
    hmmrt_hits_options *h = &st->o->hits;
    if (h->strands != HMMRT_STRAND_BOTH && h->strands != strand)
        return usage_error("--watson and --crick do not go together: give neither to search "
                           "both strands");
    h->strands = strand;
    return 0;
}

static int apply_watson(parse_state *st, const char *v)
{
    return apply_strand(st, HMMRT_STRAND_WATSON, "--watson");
}

static int apply_crick(parse_state *st, const char *v)
{
    return apply_strand(st, HMMRT_STRAND_CRICK, "--crick");
}

static int apply_nonull2(parse_state *st, const char *v)
{
    st->o->hits.nonull2 = 1;
    return note_hits(st, "--nonull2");
}

/* --hmmscan: each sequence against every model of a program of many. */
static int apply_hmmscan(parse_state *st, const char *v)
{
    if (note_hits(st, "--hmmscan") != 0)
        return HMMRT_EXIT_USAGE;
    if (st->prog->hits->n_queries < 2)
        return usage_error("--hmmscan ranks the models of a program of many against each "
                           "sequence, and this program searches with one model (%s): drop "
                           "--hmmscan (its hits mode is hmmsearch's), or import a file of "
                           "several models", st->prog->hits->query);
    st->o->hits.scan = 1;
    return 0;
}

static int apply_cut_ga(parse_state *st, const char *v) { return apply_cut(st, HMMRT_CUT_GA, "--cut_ga"); }
static int apply_cut_tc(parse_state *st, const char *v) { return apply_cut(st, HMMRT_CUT_TC, "--cut_tc"); }
static int apply_cut_nc(parse_state *st, const char *v) { return apply_cut(st, HMMRT_CUT_NC, "--cut_nc"); }

static const option_spec option_specs[] = {
    {"hits", NULL, apply_hits},
    {"tblout", "FILE", apply_tblout},
    {"domtblout", "FILE", apply_domtblout},
    {"E", "X", apply_E},
    {"T", "X", apply_T},
    {"Z", "N", apply_Z},
    {"domZ", "N", apply_domZ},
    {"domE", "X", apply_domE},
    {"domT", "X", apply_domT},
    {"incE", "X", apply_incE},
    {"incT", "X", apply_incT},
    {"incdomE", "X", apply_incdomE},
    {"incdomT", "X", apply_incdomT},
    {"cut_ga", NULL, apply_cut_ga},
    {"cut_tc", NULL, apply_cut_tc},
    {"cut_nc", NULL, apply_cut_nc},
    {"watson", NULL, apply_watson},
    {"hmmscan", NULL, apply_hmmscan},
    {"nonull2", NULL, apply_nonull2},
    {"crick", NULL, apply_crick},
    {"make-db", "DB", apply_make_db},
    {"output", "FILE", apply_output},
    {"train", NULL, apply_train},
    {"iterations", "N", apply_iterations},
    {"tolerance", "T", apply_tolerance},
    {"pseudocount", "C", apply_pseudocount},
    {"min-variance", "V", apply_min_variance},
    {"viterbi-training", NULL, apply_viterbi_training},
    {"help", NULL, apply_help},
    {"version", NULL, apply_version},
    {"threads", "N", apply_threads},
    {"skip-invalid", NULL, apply_skip_invalid},
    {"decimals", "N", apply_decimals},
    {"no-header", NULL, apply_no_header},
    {"progress", NULL, apply_progress},
    {"no-progress", NULL, apply_no_progress},
    {"sample", "N", apply_sample},
    {"length", "L", apply_length},
    {"seed", "S", apply_seed},
    {"with-path", NULL, apply_with_path},
    {"model", "NAME", apply_model},
    {"cpu", NULL, apply_cpu},
    {"device", "N", apply_device},
    {"devices", "LIST", apply_devices},
    {"double", NULL, apply_double},
    {"timing", NULL, apply_timing},
    {"scan", "on|off|auto", apply_scan},
};

static const option_spec *find_option(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof option_specs / sizeof option_specs[0]; i++)
        if (strlen(option_specs[i].name) == len && strncmp(option_specs[i].name, name, len) == 0)
            return &option_specs[i];
    return NULL;
}

/* Applies argv[*i], an option; takes its value from argv[*i + 1] when needed. */
static int parse_option(parse_state *st, int argc, char **argv, int *i)
{
    const char *arg = argv[*i];
    if (strcmp(arg, "-h") == 0)
        arg = "--help";
    /* hmmsearch's -E X, -T X and -Z N: one letter after one dash */
    int letter = arg[1] != '-' && strchr("ETZ", arg[1]) && arg[2] == '\0';
    const char *name = letter ? arg + 1 : arg + 2;
    const char *equals = letter ? NULL : strchr(name, '=');
    size_t len = equals ? (size_t)(equals - name) : strlen(name);
    const option_spec *spec = arg[1] == '-' && len > 1 ? find_option(name, len)
                              : letter ? find_option(name, 1) : NULL;
    if (!spec)
        return usage_error("unknown option '%s': %s --help lists the options", argv[*i],
                           hmmrt_progname());
    if (!spec->value_name) {
        if (equals)
            return usage_error("--%s takes no value", spec->name);
        return spec->apply(st, NULL);
    }
    if (equals)
        return spec->apply(st, equals + 1);
    if (*i + 1 >= argc && letter)
        return usage_error("-%s needs a value: -%s %s", spec->name, spec->name, spec->value_name);
    if (*i + 1 >= argc)
        return usage_error("--%s needs a value: --%s %s or --%s=%s", spec->name, spec->name,
                           spec->value_name, spec->name, spec->value_name);
    return spec->apply(st, argv[++*i]);
}

/* The team size when --threads is not given: OMP_NUM_THREADS, checked as
 * --threads is (OpenMP's own handling crashes or exits 1 on 100000), else
 * every core, at most MAX_THREADS. The run sets it explicitly. 0, or
 * HMMRT_EXIT_USAGE after saying why. */
static int threads_from_environment(hmmrt_options *o)
{
    const char *env = getenv("OMP_NUM_THREADS");
    if (!env || !*env) {
        int procs = omp_get_num_procs();
        o->threads = procs < 1 ? 1 : procs > MAX_THREADS ? MAX_THREADS : procs;
        return 0;
    }
    /* OpenMP allows blanks around the number and a list for nested levels,
     * of which the first is this level's */
    char first[32];
    size_t skip = strspn(env, " \t"), len = strcspn(env + skip, ",");
    while (len > 0 && (env[skip + len - 1] == ' ' || env[skip + len - 1] == '\t'))
        len--;
    long long n = 0;
    if (len > 0 && len < sizeof first) {
        memcpy(first, env + skip, len);
        first[len] = '\0';
    }
    if (len == 0 || len >= sizeof first || parse_number(first, 1, MAX_THREADS, &n) != 0) {
        hmmrt_buf shown = {0};
        hmmrt_describe_text(&shown, env);
        int status = usage_error("the environment's OMP_NUM_THREADS='%s' is not a number of "
                                 "threads from 1 to %d: set it to one, or unset it (every core), "
                                 "or pass --threads N, which takes precedence",
                                 shown.len ? shown.data : "", MAX_THREADS);
        hmmrt_buf_free(&shown);
        return status;
    }
    o->threads = (int)n;
    return 0;
}

/* The checks that need every option seen. */
static int check_combination(parse_state *st)
{
    hmmrt_options *o = st->o;
    if (o->help || o->version)
        return 0;
    if (o->sample && o->train)
        return usage_error("--sample and --train do not go together: one draws sequences, the "
                           "other fits a model to them");
    if (o->make_db && (o->sample || o->train))
        return usage_error("--make-db and %s do not go together: --make-db only packs the "
                           "sequence files into a database", o->sample ? "--sample" : "--train");
    if (o->n_devices && o->device_given)
        return usage_error("--device and --devices do not go together: --device N for one GPU, "
                           "--devices LIST (or all) for several");
    if (o->n_devices && o->train)
        return usage_error("--devices applies to scoring; --train's E-step runs on one GPU: "
                           "choose it with --device N");
    if (o->make_db && o->n_files == 0)
        return usage_error("--make-db %s needs the sequence files to pack: name them after it, "
                           "or - for standard input", o->make_db);
    if (o->hits.first && (o->sample || o->train || o->make_db))
        return usage_error("%s and %s do not go together: %s scores nothing", o->hits.first,
                           o->sample ? "--sample" : o->train ? "--train" : "--make-db",
                           o->sample ? "--sample" : o->train ? "--train" : "--make-db");
    if (o->hits.first && st->prog->hits->nucleic) {
        const hmmrt_hits_options *h = &o->hits;
        const char *dom = h->domtblout ? "--domtblout" : !h->dom_by_E ? "--domT"
                        : !h->incdom_by_E ? "--incdomT" : h->domZ_set ? "--domZ"
                        : st->dom_E_given ? st->dom_E_given : NULL;
        if (dom)
            return usage_error("%s: a DNA model's hits are single domains, each with its own "
                               "E-value, as nhmmer reports them, so there is no domain table "
                               "or threshold: drop %s (-E, -T, --incE, --incT and --tblout "
                               "apply)", dom, dom);
    }
    if (o->hits.cut != HMMRT_CUT_NONE) {
        const hmmrt_hits_options *h = &o->hits;
        if (!h->by_E || !h->dom_by_E || !h->inc_by_E || !h->incdom_by_E)
            return usage_error("the --cut_ga, --cut_tc and --cut_nc cutoffs set every score "
                               "threshold: drop -T, --domT, --incT and --incdomT");
    }
    if (st->train_only && !o->train)
        return usage_error("%s applies only with --train: add --train, or drop %s",
                           st->train_only, st->train_only);
    if (o->train) {
        if (st->sample_only.first)
            return usage_error("%s applies only with --sample N, not with --train: drop %s",
                               st->sample_only.first, st->sample_only.first);
        if (st->prog->n_models == 0)
            return usage_error("--train needs a model, and this program has none");
        if (o->n_files == 0)
            return usage_error("--train needs sequence files to fit the model to: name one, or - "
                               "for standard input");
        return o->threads ? 0 : threads_from_environment(o);
    }
    if (st->model_given && !o->sample)
        return usage_error("--model applies only with --sample N or --train: add one, or drop "
                           "--model");
    if (o->sample) {
        if (st->prog->n_models == 0)
            return usage_error("--sample needs a model, and this program has none");
        if (o->n_files > 0)
            return usage_error("--sample draws sequences and reads no file: drop '%s'",
                               o->files[0]);
        return 0;
    }
    if (st->sample_only.first)
        return usage_error("%s applies only with --sample N: add --sample N, or drop %s",
                           st->sample_only.first, st->sample_only.first);
    if (o->n_files == 0)
        return usage_error("no sequence file given: name one, or - for standard input "
                           "(%s --help lists the options)",
                           hmmrt_progname());
    return o->threads ? 0 : threads_from_environment(o);
}

static void set_defaults(hmmrt_options *o)
{
    memset(o, 0, sizeof *o);
    o->decimals = 6;
    o->header = 1;
    o->progress = HMMRT_PROGRESS_AUTO;
    o->seed = 1;
    o->iterations = 100;
    o->tolerance = 1e-9;
    o->min_variance = 1e-3;
    /* hmmsearch's defaults */
    o->hits = (hmmrt_hits_options){.E = 10, .domE = 10, .incE = 0.01, .incdomE = 0.01,
                                   .by_E = 1, .dom_by_E = 1, .inc_by_E = 1, .incdom_by_E = 1,
                                   .cut = HMMRT_CUT_NONE, .strands = HMMRT_STRAND_BOTH};
}

int hmmrt_parse_options(int argc, char **argv, const hmmrt_program *prog, hmmrt_options *o)
{
    set_defaults(o);
    o->files = calloc((size_t)(argc > 0 ? argc : 1), sizeof *o->files);
    if (!o->files) {
        hmmrt_error("out of memory");
        return HMMRT_EXIT_INTERNAL;
    }
    o->argc = argc;
    o->argv = argv;
    parse_state st = {.prog = prog, .o = o};
    int only_files = 0;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (!only_files && strcmp(arg, "--") == 0) {
            only_files = 1;
        } else if (!only_files && arg[0] == '-' && arg[1] != '\0') {
            int status = parse_option(&st, argc, argv, &i);
            if (status != 0)
                return status;
        } else {
            o->files[o->n_files++] = arg;
        }
    }
    return check_combination(&st);
}

void hmmrt_free_options(hmmrt_options *o)
{
    free(o->files);
    o->files = NULL;
    o->n_files = 0;
}

static const char *column_meaning(hmmrt_field_kind kind)
{
    return kind == HMMRT_FIELD_SCORE
               ? "a natural-log score; -inf when the model cannot produce the sequence"
               : "text, e.g. a traceback: state names separated by single spaces";
}

static void print_columns(FILE *f, const hmmrt_program *prog)
{
    fprintf(f, "  1  name: the first word after '>'\n");
    for (int c = 0; c < prog->n_columns; c++)
        fprintf(f, "  %d  %s: %s\n", c + 2, prog->columns[c].label,
                column_meaning(prog->columns[c].kind));
}

static void print_models(FILE *f, const hmmrt_program *prog)
{
    for (int m = 0; m < prog->n_models; m++)
        fprintf(f, "%s%s", m ? ", " : "", prog->models[m].name);
    if (prog->n_models == 0)
        fprintf(f, "(none)");
}

static void print_gpu_options(FILE *f, const hmmrt_program *prog)
{
    fprintf(f,
            "  --cpu            score on the CPU even when a GPU is there\n"
            "  --device N       score on GPU number N (default 0)\n"
            "  --devices LIST   score on several GPUs: all, or numbers such as 0,1; each\n"
            "                   batch is shared out among them, the rows in input order\n"
            "  --double         double precision on the GPU (default single; the CPU\n"
            "                   computes in double, forward and backward in long double\n"
            "                   where double's range is too small)\n");
    if (prog->gpu && prog->gpu->needs_double)
        fprintf(f, "                   This program is scored in double on the GPU anyway:\n"
                   "                   %s.\n", prog->gpu->needs_double);
    if (prog->gpu)
        fprintf(f, "                   Without a usable GPU it says why and scores on the CPU.\n");
    else
        fprintf(f, "                   Built for the C target, this program scores on the CPU;\n"
                   "                   --device and --double need a rebuild: hmmc --target=cuda\n");
}

/* Only a HMMER3 import has them (a program with no `// hmmer:` header keeps
 * its help as it was). */
static void print_hits_options(FILE *f, const hmmrt_program *prog)
{
    const hmmrt_hits_info *h = prog->hits;
    if (!h)
        return;
    fprintf(f, "\n"
               "Hits mode, as hmmsearch searches (any of these turns it on; docs/hmmer.md):\n"
               "standard output holds the hits ranked by E-value instead of the rows.\n");
    if (h->refused) {
        fprintf(f, "  This program has none: %s.\n", h->refused);
        return;
    }
    fprintf(f,
            "  --hits           the hits mode with hmmsearch's default thresholds\n"
            "  --tblout FILE    a table of the hits, in hmmsearch's --tblout layout\n"
            "  --domtblout FILE a table of their domains (hmmsearch's --domtblout)\n"
            "  -E X             report sequences of E-value <= X (default 10)\n"
            "  -T X             report sequences of score >= X bits instead\n"
            "  -Z N             E-values for a database of N sequences (default: those read)\n"
            "  --domE X, --domT X  report domains of conditional E-value <= X (default\n"
            "                   10), or score >= X bits\n"
            "  --domZ N         conditional E-values for N sequences (default: those reported)\n"
            "  --incE X, --incT X, --incdomE X, --incdomT X  the inclusion thresholds\n"
            "                   (default E-value 0.01): '!' and the tables' inc column\n"
            "  --cut_ga, --cut_tc, --cut_nc  the model's gathering, trusted or noise cutoffs\n"
            "                   (%s%s%s%s%s) as the thresholds of sequences and domains\n",
            h->has_cut[0] ? "GA" : "", h->has_cut[0] && (h->has_cut[1] || h->has_cut[2]) ? ", " : "",
            h->has_cut[1] ? "TC" : "", h->has_cut[1] && h->has_cut[2] ? ", " : "",
            h->has_cut[2] ? "NC" : "");
    if (!h->has_cut[0] && !h->has_cut[1] && !h->has_cut[2])
        fprintf(f, "                   This model has none of them.\n");
    fprintf(f, "  --nonull2        no null2 correction of biased composition (as hmmsearch's, nhmmer's)\n");
    if (h->n_queries > 1)
        fprintf(f, "  This program holds %d models: the hits mode searches with each in turn,\n"
                   "  as hmmsearch does a file of many queries;\n"
                   "  --hmmscan     each sequence against every model, as hmmscan (E-values\n"
                   "                   for Z = %d models, hmmscan's --tblout layout)\n",
                h->n_queries, h->n_queries);
    if (h->nucleic)
        fprintf(f, "  A DNA model searches both strands and reports nhmmer's hits (one domain\n"
                   "  each; no --domtblout, --domE, --domT, --domZ, --incdomE, --incdomT;\n"
                   "  -Z X is the database size in megabases):\n"
                   "  --watson         search the top strand only\n"
                   "  --crick          search the bottom strand (reverse complement) only\n");
}

void hmmrt_print_help(FILE *f, const hmmrt_program *prog)
{
    const char *me = hmmrt_progname();
    fprintf(f,
            "Usage: %s [options] SEQFILE...\n"
            "       %s --sample N [--length L] [--seed S] [--with-path] [--model NAME]\n"
            "       %s --train SEQFILE... [--iterations N] [--tolerance T] [--pseudocount C]\n"
            "              [--viterbi-training] [--min-variance V] [--model NAME] > FITTED.hmm\n"
            "       %s --make-db DB.hmmcdb SEQFILE...\n"
            "Scores every sequence of the FASTA files SEQFILE... (- is standard input; gzip-\n"
            "compressed files too, and databases made by --make-db) with the program\n"
            "compiled by hmmc from %s, and prints one row per sequence.\n"
            "A sequence's name is the first word after '>' (not starting with '#'); white\n"
            "space inside sequences is ignored; lines end in LF, CRLF or CR.\n\n",
            me, me, me, me, prog->source);
    fprintf(f,
            "Options (write --opt VALUE or --opt=VALUE):\n"
            "  --threads N      use N threads, 1 to 4096 (default: OMP_NUM_THREADS, which\n"
            "                   must be such a number, else every core)\n"
            "  --skip-invalid   skip a sequence with a symbol outside the alphabet, with a\n"
            "                   warning, instead of stopping (the exit status is then 3)\n"
            "  --decimals N     decimals of scores, 0 to 17 (default 6)\n"
            "  --no-header      leave out the '#name ...' header line (and the notes\n"
            "                   on columns before it)\n"
            "  --progress       show progress on standard error, on one line\n"
            "  --no-progress    do not (default: progress when standard error is a terminal)\n"
            "  --timing         at the end, print on standard error where the time went:\n"
            "                   reading, mapping, scoring (the GPU's phases too),\n"
            "                   formatting, writing, with symbols per second\n"
            "  --scan on|off|auto  one long sequence over every thread, cut into chunks\n"
            "                   (default auto: where the rule of docs/scan.md expects a gain)\n");
    print_gpu_options(f, prog);
    fprintf(f,
            "  --sample N       score nothing: write N sequences drawn from a model, as\n"
            "                   FASTA named sample1, sample2, ... (60 symbols a line)\n"
            "  --length L       with --sample: exactly L symbols each (moves into the end\n"
            "                   state wait until then, and the draw stops at the L-th\n"
            "                   symbol); 0, the default, draws until the end state\n"
            "  --seed S         with --sample: seed of the random numbers (default 1);\n"
            "                   the same seed draws the same sequences\n"
            "  --with-path      with --sample: add the states visited to each header:\n"
            "                   '>sample1 path=start fair fair loaded end'\n"
            "  --train          score nothing: fit a model's weights and emission values to\n"
            "                   the sequences (Baum-Welch) and write the whole program,\n"
            "                   with the fitted numbers, as .hmm source on standard\n"
            "                   output; each iteration's log-likelihood goes to standard\n"
            "                   error. Numbers marked `fixed` and zeros are kept\n"
            "  --iterations N   with --train: at most N iterations (default 100)\n"
            "  --tolerance T    with --train: stop when an iteration raises the total\n"
            "                   log-likelihood by less than T x |total| (default 1e-9)\n"
            "  --pseudocount C  with --train: add C to every expected count (default 0)\n"
            "  --min-variance V with --train over real observations: add V to every fitted\n"
            "                   variance and covariance diagonal (default 1e-3)\n"
            "  --viterbi-training  with --train: count the uses along each sequence's best\n"
            "                   path instead of all paths\n"
            "  --output FILE    write the table (with --train: the program) to FILE, not to\n"
            "                   standard output; under mpirun rank 0 writes it itself\n"
            "  --make-db DB     score nothing: pack the sequences into the database file DB,\n"
            "                   made once and mapped by later runs (%s DB), which then\n"
            "                   skip parsing; every symbol is checked now (--skip-invalid\n"
            "                   leaves bad sequences out). It serves programs of the same\n"
            "                   alphabets; another program refuses it\n"
            "  --model NAME     with --sample or --train: the model (default the first):\n"
            "                   ", me);
    print_models(f, prog);
    print_hits_options(f, prog);
    fprintf(f,
            "\n"
            "  --help           show this help;  --version  show the version\n\n"
            "Output: tab-separated on standard output, one row per sequence, in input\n"
            "order, after a header line '#name<TAB>COLUMN...'. Columns:\n");
    print_columns(f, prog);
    fprintf(f,
            "Lines starting with '#' are comments: a column whose layout needs words has\n"
            "a line '# LABEL: NOTE' before the header. A run that stops early (bad input)\n"
            "ends its output with '# incomplete: stopped at ...' ('# incomplete: stopped\n"
            "by SIGTERM' for SIGTERM, SIGINT, SIGHUP); the rows before it are complete.\n\n"
            "Exit status:\n"
            "  0  every sequence was scored and printed\n"
            "  1  bad command line (or OMP_NUM_THREADS); nothing was read\n"
            "  2  unreadable or malformed input, or a symbol outside the alphabet\n"
            "     (without --skip-invalid), or --sample could not draw a sequence:\n"
            "     the run stopped\n"
            "  3  the run finished, but --skip-invalid skipped sequences\n"
            "  4  standard output could not be written (closed pipe, full disk)\n"
            "  5  out of memory, or a device error\n"
            "  128+N  killed by signal N (143 SIGTERM, 130 SIGINT, 129 SIGHUP)\n");
}

void hmmrt_print_version(FILE *f, const hmmrt_program *prog)
{
    fprintf(f, "%s (hmmc %s, target %s, from %s)\n", prog->name, HMMRT_VERSION, prog->target,
            prog->source);
}
