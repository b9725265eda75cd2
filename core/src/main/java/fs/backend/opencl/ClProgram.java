package fs.backend.opencl;

import static fs.opencl.bindings.opencl_h.*;

import fs.FsException;
import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/** Builds OpenCL programs from source; a failed build is an {@link FsException} quoting the build log. */
final class ClProgram {
    /** How many lines of a failed build's log the error message quotes. */
    private static final int LOG_LINES = 6;
    /** {@code #include "file"} of a header in the kernels' own folder. */
    private static final Pattern INCLUDE = Pattern.compile("\\s*#\\s*include\\s+\"([A-Za-z0-9_.]+)\"\\s*");

    private ClProgram() {}

    /**
     * The text of a kernel file on the classpath ({@code weights.cl} is {@code /kernels/weights.cl}), its includes
     * and theirs inlined.
     */
    static String source(String file) {
        return source(List.of(file));
    }

    /** The texts of kernel files one after the other, each as {@link #source(String)} gives it. */
    static String source(List<String> files) {
        StringBuilder source = new StringBuilder();
        for (String file : files) inline(file, source, new ArrayList<>());
        return source.toString();
    }

    /** Appends {@code file}'s text to {@code source}; {@code including} are the files whose includes led here. */
    private static void inline(String file, StringBuilder source, List<String> including) {
        if (including.contains(file)) {
            throw new FsException("OpenCL kernel source /kernels/" + file + " includes itself (through "
                    + String.join(", ", including) + ")");
        }
        including.add(file);
        for (String line : resource(file).split("\n", -1)) {
            Matcher include = INCLUDE.matcher(line);
            // clCreateProgramWithSource has no folder to search, so a kernel file's #include "x" is inlined from the
            // same classpath folder, every time: an include may sit in an #if branch that the build leaves out, and
            // each header's include guard keeps a second inclusion harmless.
            if (include.matches()) {
                inline(include.group(1), source, including);
            } else {
                source.append(line).append('\n');
            }
        }
        including.removeLast();
    }

    private static String resource(String file) {
        try (InputStream in = ClProgram.class.getResourceAsStream("/kernels/" + file)) {
            if (in == null) throw new FsException("OpenCL kernel source /kernels/" + file + " is missing from the classpath");
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new FsException("cannot read OpenCL kernel source /kernels/" + file + ": " + e.getMessage(), e);
        }
    }

    /** Compiles {@code source} for one device; {@code label} names it in errors (a file name). */
    static MemorySegment build(MemorySegment context, MemorySegment device, String label, String source, String options) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment status = arena.allocate(ValueLayout.JAVA_INT);
            MemorySegment strings = arena.allocate(ValueLayout.ADDRESS);
            strings.set(ValueLayout.ADDRESS, 0, arena.allocateFrom(source));
            MemorySegment program = clCreateProgramWithSource(context, 1, strings, MemorySegment.NULL, status);
            ClStatus.check(status.get(ValueLayout.JAVA_INT, 0), "clCreateProgramWithSource(" + label + ")");
            MemorySegment devices = arena.allocate(ValueLayout.ADDRESS);
            devices.set(ValueLayout.ADDRESS, 0, device);
            int built = clBuildProgram(program, 1, devices, arena.allocateFrom(options), MemorySegment.NULL,
                    MemorySegment.NULL);
            if (built != CL_SUCCESS()) {
                String log = buildLog(arena, program, device);
                clReleaseProgram(program);
                String firstLines = Arrays.stream(log.split("\n")).map(String::strip).filter(s -> !s.isEmpty())
                        .limit(LOG_LINES).collect(Collectors.joining(" | "));
                throw new FsException("OpenCL build of " + label + " (" + options + ") failed with "
                        + ClStatus.describe(built) + ": " + (firstLines.isEmpty() ? "no build log" : firstLines));
            }
            return program;
        }
    }

    private static String buildLog(Arena arena, MemorySegment program, MemorySegment device) {
        MemorySegment size = arena.allocate(ValueLayout.JAVA_LONG);
        if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG(), 0, MemorySegment.NULL, size) != CL_SUCCESS()) {
            return "";
        }
        MemorySegment log = arena.allocate(Math.max(1, size.get(ValueLayout.JAVA_LONG, 0)));
        if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG(), log.byteSize(), log, MemorySegment.NULL)
                != CL_SUCCESS()) {
            return "";
        }
        return log.getString(0);
    }
}
