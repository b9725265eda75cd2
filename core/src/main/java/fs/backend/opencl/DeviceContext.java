package fs.backend.opencl;

import static fs.opencl.bindings.opencl_h.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A cl_context on one device and the programs built for it. One per device per process, never released: programs are
 * compiled once however many backends the process opens, and backends own only their queues, kernels and buffers.
 */
final class DeviceContext {
    private static final Map<Integer, DeviceContext> BY_DEVICE = new HashMap<>();

    final OpenCl.Device device;
    final MemorySegment deviceId;
    final MemorySegment context;
    private final Map<String, MemorySegment> programs = new HashMap<>();

    private DeviceContext(OpenCl.Device device) {
        this.device = device;
        this.deviceId = OpenCl.deviceId(device);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment properties = arena.allocate(ValueLayout.JAVA_LONG, 3);
            properties.setAtIndex(ValueLayout.JAVA_LONG, 0, CL_CONTEXT_PLATFORM());
            properties.setAtIndex(ValueLayout.ADDRESS, 1, OpenCl.platformId(device));
            MemorySegment devices = arena.allocate(ValueLayout.ADDRESS);
            devices.set(ValueLayout.ADDRESS, 0, deviceId);
            MemorySegment status = arena.allocate(ValueLayout.JAVA_INT);
            this.context = clCreateContext(properties, 1, devices, MemorySegment.NULL, MemorySegment.NULL, status);
            ClStatus.check(status.get(ValueLayout.JAVA_INT, 0), "clCreateContext(" + device.name() + ")");
        }
    }

    static synchronized DeviceContext of(OpenCl.Device device) {
        return BY_DEVICE.computeIfAbsent(device.index(), i -> new DeviceContext(device));
    }

    /** The program of kernel file {@code file} built with {@code options}, compiled on first use. */
    MemorySegment program(String file, String options) {
        return program(List.of(file), options);
    }

    /** The program of kernel files {@code files}, one after the other, built with {@code options}. */
    synchronized MemorySegment program(List<String> files, String options) {
        String label = String.join(" + ", files);
        String key = label + " " + options;
        MemorySegment program = programs.get(key);
        if (program == null) {
            program = ClProgram.build(context, deviceId, label, ClProgram.source(files), options);
            programs.put(key, program);
        }
        return program;
    }
}
