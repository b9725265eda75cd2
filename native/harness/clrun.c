/*
 * clrun: runs one OpenCL kernel from a .cl file on any OpenCL device, over inputs read from files, and reports the
 * kernel's time from profiling events. It exists so kernels can be profiled with vendor tools without a JVM in the
 * way. See native/README.md for the command line.
 */
#define _POSIX_C_SOURCE 200809L /* strndup */
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120 /* 1.2 API only: the widest set of drivers implements it */
#endif
#include <CL/cl.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ARGS 64

/* Every error code of the OpenCL 3.0 headers, plus the ICD loader's "no platform" code. */
static const struct { cl_int code; const char *name; } CL_ERRORS[] = {
    {0, "CL_SUCCESS"}, {-1, "CL_DEVICE_NOT_FOUND"}, {-2, "CL_DEVICE_NOT_AVAILABLE"},
    {-3, "CL_COMPILER_NOT_AVAILABLE"}, {-4, "CL_MEM_OBJECT_ALLOCATION_FAILURE"}, {-5, "CL_OUT_OF_RESOURCES"},
    {-6, "CL_OUT_OF_HOST_MEMORY"}, {-7, "CL_PROFILING_INFO_NOT_AVAILABLE"}, {-8, "CL_MEM_COPY_OVERLAP"},
    {-9, "CL_IMAGE_FORMAT_MISMATCH"}, {-10, "CL_IMAGE_FORMAT_NOT_SUPPORTED"}, {-11, "CL_BUILD_PROGRAM_FAILURE"},
    {-12, "CL_MAP_FAILURE"}, {-13, "CL_MISALIGNED_SUB_BUFFER_OFFSET"},
    {-14, "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST"}, {-15, "CL_COMPILE_PROGRAM_FAILURE"},
    {-16, "CL_LINKER_NOT_AVAILABLE"}, {-17, "CL_LINK_PROGRAM_FAILURE"}, {-18, "CL_DEVICE_PARTITION_FAILED"},
    {-19, "CL_KERNEL_ARG_INFO_NOT_AVAILABLE"}, {-30, "CL_INVALID_VALUE"}, {-31, "CL_INVALID_DEVICE_TYPE"},
    {-32, "CL_INVALID_PLATFORM"}, {-33, "CL_INVALID_DEVICE"}, {-34, "CL_INVALID_CONTEXT"},
    {-35, "CL_INVALID_QUEUE_PROPERTIES"}, {-36, "CL_INVALID_COMMAND_QUEUE"}, {-37, "CL_INVALID_HOST_PTR"},
    {-38, "CL_INVALID_MEM_OBJECT"}, {-39, "CL_INVALID_IMAGE_FORMAT_DESCRIPTOR"}, {-40, "CL_INVALID_IMAGE_SIZE"},
    {-41, "CL_INVALID_SAMPLER"}, {-42, "CL_INVALID_BINARY"}, {-43, "CL_INVALID_BUILD_OPTIONS"},
    {-44, "CL_INVALID_PROGRAM"}, {-45, "CL_INVALID_PROGRAM_EXECUTABLE"}, {-46, "CL_INVALID_KERNEL_NAME"},
    {-47, "CL_INVALID_KERNEL_DEFINITION"}, {-48, "CL_INVALID_KERNEL"}, {-49, "CL_INVALID_ARG_INDEX"},
    {-50, "CL_INVALID_ARG_VALUE"}, {-51, "CL_INVALID_ARG_SIZE"}, {-52, "CL_INVALID_KERNEL_ARGS"},
    {-53, "CL_INVALID_WORK_DIMENSION"}, {-54, "CL_INVALID_WORK_GROUP_SIZE"}, {-55, "CL_INVALID_WORK_ITEM_SIZE"},
    {-56, "CL_INVALID_GLOBAL_OFFSET"}, {-57, "CL_INVALID_EVENT_WAIT_LIST"}, {-58, "CL_INVALID_EVENT"},
    {-59, "CL_INVALID_OPERATION"}, {-60, "CL_INVALID_GL_OBJECT"}, {-61, "CL_INVALID_BUFFER_SIZE"},
    {-62, "CL_INVALID_MIP_LEVEL"}, {-63, "CL_INVALID_GLOBAL_WORK_SIZE"}, {-64, "CL_INVALID_PROPERTY"},
    {-65, "CL_INVALID_IMAGE_DESCRIPTOR"}, {-66, "CL_INVALID_COMPILER_OPTIONS"}, {-67, "CL_INVALID_LINKER_OPTIONS"},
    {-68, "CL_INVALID_DEVICE_PARTITION_COUNT"}, {-69, "CL_INVALID_PIPE_SIZE"}, {-70, "CL_INVALID_DEVICE_QUEUE"},
    {-71, "CL_INVALID_SPEC_ID"}, {-72, "CL_MAX_SIZE_RESTRICTION_EXCEEDED"},
    {-1001, "CL_PLATFORM_NOT_FOUND_KHR"},
};

static const char *cl_error_name(cl_int code) {
    for (size_t i = 0; i < sizeof CL_ERRORS / sizeof CL_ERRORS[0]; i++)
        if (CL_ERRORS[i].code == code) return CL_ERRORS[i].name;
    return "unknown OpenCL error";
}

static void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("clrun: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

/* Names the failed function and its error, e.g. "clBuildProgram failed: CL_INVALID_BUILD_OPTIONS (-43)". */
#define CHECK(call)                                                                                          \
    do {                                                                                                     \
        cl_int err_ = (call);                                                                                \
        if (err_ != CL_SUCCESS)                                                                              \
            die("%.*s failed: %s (%d)", (int)strcspn(#call, "("), #call, cl_error_name(err_), err_);         \
    } while (0)
#define CHECK_ERR(what, err)                                                                                 \
    do {                                                                                                     \
        if ((err) != CL_SUCCESS) die("%s failed: %s (%d)", what, cl_error_name(err), err);                   \
    } while (0)

static void usage(void) {
    fputs("usage: clrun [--platform P] [--device D] [--list] [--build-options \"...\"]\n"
          "             --kernel FILE.cl:NAME --global G[,G2[,G3]] [--local L[,L2[,L3]]]\n"
          "             [--repeat N] [--print N] ARG...\n"
          "  P, D: index or a substring of the name (default 0); ARG, one per kernel argument, in order:\n"
          "  buf:in:PATH  buf:out:BYTES:PATH  buf:inout:PATH:OUTPATH  local:BYTES\n"
          "  int:V  uint:V  long:V  float:V\n",
          stderr);
    exit(2);
}

static unsigned long long parse_unsigned(const char *text, const char *what) {
    char *end;
    errno = 0;
    unsigned long long value = strtoull(text, &end, 10);
    if (errno || end == text || *end || text[0] == '-') die("%s: '%s' is not a non-negative integer", what, text);
    return value;
}

static long long parse_signed(const char *text, const char *what) {
    char *end;
    errno = 0;
    long long value = strtoll(text, &end, 10);
    if (errno || end == text || *end) die("%s: '%s' is not an integer", what, text);
    return value;
}

/* "G[,G2[,G3]]" into sizes; returns the number of dimensions. */
static cl_uint parse_sizes(const char *text, size_t sizes[3], const char *what) {
    char copy[256];
    if (strlen(text) >= sizeof copy) die("%s: '%s' is too long", what, text);
    strcpy(copy, text);
    cl_uint dims = 0;
    for (char *part = strtok(copy, ","); part; part = strtok(NULL, ",")) {
        if (dims == 3) die("%s: '%s' has more than 3 dimensions", what, text);
        sizes[dims] = (size_t)parse_unsigned(part, what);
        if (sizes[dims++] == 0) die("%s: '%s' has a zero size", what, text);
    }
    if (dims == 0) die("%s: no size given", what);
    return dims;
}

static void *read_file(const char *path, size_t *size) {
    FILE *file = fopen(path, "rb");
    if (!file) die("cannot read %s: %s", path, strerror(errno));
    if (fseek(file, 0, SEEK_END) != 0) die("cannot seek %s: %s", path, strerror(errno));
    long length = ftell(file);
    if (length < 0) die("cannot size %s: %s", path, strerror(errno));
    rewind(file);
    char *data = malloc((size_t)length + 1); /* +1: a NUL so kernel sources can be used as strings */
    if (!data) die("out of memory reading %s (%ld bytes)", path, length);
    if (fread(data, 1, (size_t)length, file) != (size_t)length) die("short read on %s", path);
    fclose(file);
    data[length] = '\0';
    *size = (size_t)length;
    return data;
}

static void write_file(const char *path, const void *data, size_t size) {
    FILE *file = fopen(path, "wb");
    if (!file) die("cannot write %s: %s", path, strerror(errno));
    if (fwrite(data, 1, size, file) != size || fclose(file) != 0) die("cannot write %s: %s", path, strerror(errno));
}

enum arg_kind { BUF_IN, BUF_OUT, BUF_INOUT, LOCAL, SCALAR };

struct kernel_arg {
    enum arg_kind kind;
    const char *spec;     /* as given on the command line, for messages */
    const char *out_path; /* BUF_OUT, BUF_INOUT */
    void *host;           /* buffers: the input (BUF_IN, BUF_INOUT) or the result (BUF_OUT) */
    size_t bytes;         /* buffer or local size, or the scalar's size */
    union { cl_int i; cl_uint u; cl_long l; cl_float f; } scalar;
    cl_mem mem;
};

static struct kernel_arg parse_arg(const char *spec) {
    struct kernel_arg arg = {.spec = spec};
    const char *colon = strchr(spec, ':');
    if (!colon) die("argument '%s': expected KIND:VALUE", spec);
    size_t kind_len = (size_t)(colon - spec);
    const char *rest = colon + 1;
    if (kind_len == 3 && !strncmp(spec, "buf", 3)) {
        if (!strncmp(rest, "in:", 3)) {
            arg.kind = BUF_IN;
            arg.host = read_file(rest + 3, &arg.bytes);
        } else if (!strncmp(rest, "out:", 4)) {
            const char *size_end = strchr(rest + 4, ':');
            if (!size_end) die("argument '%s': expected buf:out:BYTES:PATH", spec);
            char size_text[32];
            size_t len = (size_t)(size_end - (rest + 4));
            if (len >= sizeof size_text) die("argument '%s': BYTES is too long", spec);
            memcpy(size_text, rest + 4, len);
            size_text[len] = '\0';
            arg.kind = BUF_OUT;
            arg.bytes = (size_t)parse_unsigned(size_text, spec);
            arg.out_path = size_end + 1;
            arg.host = calloc(arg.bytes ? arg.bytes : 1, 1);
            if (!arg.host) die("argument '%s': out of memory", spec);
        } else if (!strncmp(rest, "inout:", 6)) {
            /* The output path is after the last colon, so the input path may contain colons. */
            const char *split = strrchr(rest + 6, ':');
            if (!split) die("argument '%s': expected buf:inout:PATH:OUTPATH", spec);
            char *in_path = strndup(rest + 6, (size_t)(split - (rest + 6)));
            arg.kind = BUF_INOUT;
            arg.host = read_file(in_path, &arg.bytes);
            arg.out_path = split + 1;
            free(in_path);
        } else {
            die("argument '%s': expected buf:in:, buf:out: or buf:inout:", spec);
        }
        if (arg.bytes == 0) die("argument '%s': buffer is empty", spec);
    } else if (kind_len == 5 && !strncmp(spec, "local", 5)) {
        arg.kind = LOCAL;
        arg.bytes = (size_t)parse_unsigned(rest, spec);
        if (arg.bytes == 0) die("argument '%s': local size must be positive", spec);
    } else {
        arg.kind = SCALAR;
        if (kind_len == 3 && !strncmp(spec, "int", 3)) {
            long long v = parse_signed(rest, spec);
            if (v < INT32_MIN || v > INT32_MAX) die("argument '%s': out of range for int", spec);
            arg.scalar.i = (cl_int)v, arg.bytes = sizeof(cl_int);
        } else if (kind_len == 4 && !strncmp(spec, "uint", 4)) {
            unsigned long long v = parse_unsigned(rest, spec);
            if (v > UINT32_MAX) die("argument '%s': out of range for uint", spec);
            arg.scalar.u = (cl_uint)v, arg.bytes = sizeof(cl_uint);
        } else if (kind_len == 4 && !strncmp(spec, "long", 4)) {
            arg.scalar.l = (cl_long)parse_signed(rest, spec), arg.bytes = sizeof(cl_long);
        } else if (kind_len == 5 && !strncmp(spec, "float", 5)) {
            char *end;
            arg.scalar.f = strtof(rest, &end);
            if (end == rest || *end) die("argument '%s': '%s' is not a number", spec, rest);
            arg.bytes = sizeof(cl_float);
        } else {
            die("argument '%s': unknown kind (buf, local, int, uint, long, float)", spec);
        }
    }
    return arg;
}

static char *platform_name(cl_platform_id platform, cl_platform_info what) {
    size_t size;
    CHECK(clGetPlatformInfo(platform, what, 0, NULL, &size));
    char *text = malloc(size);
    CHECK(clGetPlatformInfo(platform, what, size, text, NULL));
    return text;
}

static char *device_name(cl_device_id device, cl_device_info what) {
    size_t size;
    CHECK(clGetDeviceInfo(device, what, 0, NULL, &size));
    char *text = malloc(size);
    CHECK(clGetDeviceInfo(device, what, size, text, NULL));
    return text;
}

static cl_platform_id *platforms(cl_uint *count) {
    CHECK(clGetPlatformIDs(0, NULL, count));
    cl_platform_id *ids = malloc(*count * sizeof *ids);
    CHECK(clGetPlatformIDs(*count, ids, NULL));
    return ids;
}

static cl_device_id *devices(cl_platform_id platform, cl_uint *count) {
    cl_int err = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, NULL, count);
    if (err == CL_DEVICE_NOT_FOUND) *count = 0;
    else CHECK_ERR("clGetDeviceIDs", err);
    cl_device_id *ids = malloc((*count ? *count : 1) * sizeof *ids);
    if (*count) CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, *count, ids, NULL));
    return ids;
}

static void list_devices(void) {
    cl_uint platform_count;
    cl_platform_id *platform_ids = platforms(&platform_count);
    for (cl_uint p = 0; p < platform_count; p++) {
        char *name = platform_name(platform_ids[p], CL_PLATFORM_NAME);
        char *version = platform_name(platform_ids[p], CL_PLATFORM_VERSION);
        printf("platform %u: %s (%s)\n", p, name, version);
        cl_uint device_count;
        cl_device_id *device_ids = devices(platform_ids[p], &device_count);
        for (cl_uint d = 0; d < device_count; d++) {
            char *dname = device_name(device_ids[d], CL_DEVICE_NAME);
            cl_uint units;
            cl_ulong global_mem, local_mem;
            size_t max_group;
            CHECK(clGetDeviceInfo(device_ids[d], CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL));
            CHECK(clGetDeviceInfo(device_ids[d], CL_DEVICE_GLOBAL_MEM_SIZE, sizeof global_mem, &global_mem, NULL));
            CHECK(clGetDeviceInfo(device_ids[d], CL_DEVICE_LOCAL_MEM_SIZE, sizeof local_mem, &local_mem, NULL));
            CHECK(clGetDeviceInfo(device_ids[d], CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof max_group, &max_group, NULL));
            printf("  device %u: %s: %u compute units, %llu MiB global, %llu KiB local, work-group <= %zu\n", d,
                   dname, units, (unsigned long long)(global_mem >> 20), (unsigned long long)(local_mem >> 10),
                   max_group);
            free(dname);
        }
        free(device_ids), free(name), free(version);
    }
    free(platform_ids);
}

/* Picks by index when the selector is a number, else the first whose name contains it. */
static cl_uint select_index(const char *selector, char **names, cl_uint count, const char *what) {
    if (count == 0) die("no %s found (clrun --list shows what OpenCL sees)", what);
    if (!selector) return 0;
    char *end;
    unsigned long index = strtoul(selector, &end, 10);
    if (*selector && !*end) {
        if (index >= count) die("%s %lu does not exist: there are %u (clrun --list)", what, index, count);
        return (cl_uint)index;
    }
    for (cl_uint i = 0; i < count; i++)
        if (strstr(names[i], selector)) return i;
    die("no %s named like '%s' (clrun --list)", what, selector);
    return 0;
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    const char *platform_selector = NULL, *device_selector = NULL, *build_options = "", *kernel_spec = NULL;
    const char *global_spec = NULL, *local_spec = NULL;
    unsigned long long repeat = 10, print_count = 0;
    int list = 0;
    struct kernel_arg args[MAX_ARGS];
    cl_uint arg_count = 0;

    setvbuf(stdout, NULL, _IOLBF, 0); /* keep stdout and stderr lines in order when both go to one pipe */
    for (int i = 1; i < argc; i++) {
        const char *opt = argv[i];
        int has_value = i + 1 < argc;
        if (!strcmp(opt, "--list")) list = 1;
        else if (!strcmp(opt, "--help") || !strcmp(opt, "-h")) usage();
        else if (!strncmp(opt, "--", 2) && !has_value) die("%s needs a value", opt);
        else if (!strcmp(opt, "--platform")) platform_selector = argv[++i];
        else if (!strcmp(opt, "--device")) device_selector = argv[++i];
        else if (!strcmp(opt, "--build-options")) build_options = argv[++i];
        else if (!strcmp(opt, "--kernel")) kernel_spec = argv[++i];
        else if (!strcmp(opt, "--global")) global_spec = argv[++i];
        else if (!strcmp(opt, "--local")) local_spec = argv[++i];
        else if (!strcmp(opt, "--repeat")) repeat = parse_unsigned(argv[++i], "--repeat");
        else if (!strcmp(opt, "--print")) print_count = parse_unsigned(argv[++i], "--print");
        else if (!strncmp(opt, "--", 2)) die("unknown option %s (clrun --help)", opt);
        else if (arg_count == MAX_ARGS) die("more than %d kernel arguments", MAX_ARGS);
        else args[arg_count++] = parse_arg(opt);
    }
    if (list) {
        list_devices();
        return 0;
    }
    if (!kernel_spec || !global_spec) usage();
    if (repeat == 0) die("--repeat must be at least 1");

    size_t global[3], local[3];
    cl_uint dims = parse_sizes(global_spec, global, "--global");
    if (local_spec && parse_sizes(local_spec, local, "--local") != dims)
        die("--local '%s' and --global '%s' differ in dimensions", local_spec, global_spec);

    const char *name_split = strrchr(kernel_spec, ':');
    if (!name_split || !name_split[1]) die("--kernel '%s': expected FILE.cl:NAME", kernel_spec);
    const char *kernel_name = name_split + 1;
    char *source_path = strndup(kernel_spec, (size_t)(name_split - kernel_spec));

    /* Pick the device. */
    cl_uint platform_count, device_count;
    cl_platform_id *platform_ids = platforms(&platform_count);
    char *platform_names[64];
    if (platform_count > 64) platform_count = 64;
    for (cl_uint p = 0; p < platform_count; p++) platform_names[p] = platform_name(platform_ids[p], CL_PLATFORM_NAME);
    cl_uint p = select_index(platform_selector, platform_names, platform_count, "platform");
    cl_device_id *device_ids = devices(platform_ids[p], &device_count);
    char *device_names[64];
    if (device_count > 64) device_count = 64;
    for (cl_uint d = 0; d < device_count; d++) device_names[d] = device_name(device_ids[d], CL_DEVICE_NAME);
    cl_uint d = select_index(device_selector, device_names, device_count, "device");
    cl_device_id device = device_ids[d];
    char *device_version = device_name(device, CL_DEVICE_VERSION);
    printf("device: %s (%s; platform %u: %s)\n", device_names[d], device_version, p, platform_names[p]);

    cl_int err;
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK_ERR("clCreateContext", err);
    cl_command_queue queue = clCreateCommandQueue(context, device, CL_QUEUE_PROFILING_ENABLE, &err);
    CHECK_ERR("clCreateCommandQueue", err);

    /* Build, with the kernel's own folder on the include path so its #include "x.h" lines resolve. */
    size_t source_size;
    const char *source = read_file(source_path, &source_size);
    cl_program program = clCreateProgramWithSource(context, 1, &source, &source_size, &err);
    CHECK_ERR("clCreateProgramWithSource", err);
    const char *slash = strrchr(source_path, '/');
    size_t dir_len = slash ? (size_t)(slash - source_path) : 1;
    char *options = malloc(dir_len + strlen(build_options) + 8);
    sprintf(options, "-I %.*s %s", (int)dir_len, slash ? source_path : ".", build_options);
    err = clBuildProgram(program, 1, &device, options, NULL, NULL);
    if (err != CL_SUCCESS) {
        size_t log_size;
        CHECK(clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, NULL, &log_size));
        char *log = malloc(log_size + 1);
        CHECK(clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, log_size, log, NULL));
        log[log_size] = '\0';
        fprintf(stderr, "clrun: build log of %s (options: %s):\n%s\n", source_path, options, log);
        die("clBuildProgram failed: %s (%d)", cl_error_name(err), err);
    }
    cl_kernel kernel = clCreateKernel(program, kernel_name, &err);
    if (err == CL_INVALID_KERNEL_NAME) die("%s has no kernel named '%s'", source_path, kernel_name);
    CHECK_ERR("clCreateKernel", err);
    cl_uint expected_args;
    CHECK(clGetKernelInfo(kernel, CL_KERNEL_NUM_ARGS, sizeof expected_args, &expected_args, NULL));
    if (expected_args != arg_count)
        die("kernel %s takes %u arguments, %u given", kernel_name, expected_args, arg_count);

    for (cl_uint a = 0; a < arg_count; a++) {
        struct kernel_arg *arg = &args[a];
        if (arg->kind == BUF_IN || arg->kind == BUF_OUT || arg->kind == BUF_INOUT) {
            cl_mem_flags flags = arg->kind == BUF_IN ? CL_MEM_READ_ONLY : CL_MEM_READ_WRITE;
            arg->mem = clCreateBuffer(context, flags, arg->bytes, NULL, &err);
            CHECK_ERR(arg->spec, err);
            if (arg->kind == BUF_IN)
                CHECK(clEnqueueWriteBuffer(queue, arg->mem, CL_TRUE, 0, arg->bytes, arg->host, 0, NULL, NULL));
            err = clSetKernelArg(kernel, a, sizeof arg->mem, &arg->mem);
        } else if (arg->kind == LOCAL) {
            err = clSetKernelArg(kernel, a, arg->bytes, NULL);
        } else {
            err = clSetKernelArg(kernel, a, arg->bytes, &arg->scalar);
        }
        if (err != CL_SUCCESS)
            die("kernel argument %u ('%s'): %s (%d)", a, arg->spec, cl_error_name(err), err);
    }

    /* Each run starts from the same inputs: inout buffers are rewritten and out buffers zeroed before it. */
    double *micros = malloc(repeat * sizeof *micros);
    for (unsigned long long r = 0; r < repeat; r++) {
        for (cl_uint a = 0; a < arg_count; a++)
            if (args[a].kind == BUF_INOUT || args[a].kind == BUF_OUT)
                CHECK(clEnqueueWriteBuffer(queue, args[a].mem, CL_FALSE, 0, args[a].bytes, args[a].host, 0, NULL,
                                           NULL));
        cl_event event;
        CHECK(clEnqueueNDRangeKernel(queue, kernel, dims, NULL, global, local_spec ? local : NULL, 0, NULL, &event));
        CHECK(clWaitForEvents(1, &event));
        cl_int status;
        CHECK(clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL));
        if (status < 0) die("kernel %s failed on run %llu: %s (%d)", kernel_name, r + 1, cl_error_name(status), status);
        cl_ulong start, end;
        CHECK(clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL));
        CHECK(clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL));
        micros[r] = (double)(end - start) / 1000.0;
        CHECK(clReleaseEvent(event));
    }
    qsort(micros, repeat, sizeof *micros, compare_doubles);
    double median = repeat % 2 ? micros[repeat / 2] : (micros[repeat / 2 - 1] + micros[repeat / 2]) / 2;
    printf("kernel %s: %llu runs, min %.1f us, median %.1f us, max %.1f us\n", kernel_name, repeat, micros[0], median,
           micros[repeat - 1]);

    for (cl_uint a = 0; a < arg_count; a++) {
        struct kernel_arg *arg = &args[a];
        if (arg->kind != BUF_OUT && arg->kind != BUF_INOUT) continue;
        /* The host copy (BUF_OUT's zeros, BUF_INOUT's input) is not needed once the runs are done. */
        CHECK(clEnqueueReadBuffer(queue, arg->mem, CL_TRUE, 0, arg->bytes, arg->host, 0, NULL, NULL));
        write_file(arg->out_path, arg->host, arg->bytes);
        printf("wrote %s (%zu bytes)", arg->out_path, arg->bytes);
        size_t floats = arg->bytes / sizeof(float);
        for (size_t k = 0; k < print_count && k < floats; k++) printf("%s%g", k ? " " : ": ", ((float *)arg->host)[k]);
        putchar('\n');
    }

    for (cl_uint a = 0; a < arg_count; a++) {
        if (args[a].mem) clReleaseMemObject(args[a].mem);
        free(args[a].host);
    }
    clReleaseKernel(kernel);
    clReleaseProgram(program);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    return 0;
}
