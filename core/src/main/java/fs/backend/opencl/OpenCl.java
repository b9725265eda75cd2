package fs.backend.opencl;

import static fs.opencl.bindings.opencl_h.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The OpenCL platforms and devices of this machine, enumerated once per process, and the choice of the device a
 * backend runs on. Never throws for a missing library, driver or device: {@link #unavailableReason()} says why.
 */
public final class OpenCl {

    /** The kinds of device OpenCL reports; {@code OTHER} covers accelerators and custom devices. */
    public enum DeviceType { GPU, CPU, OTHER }

    /** Extensions that change what kernels can do; {@link Device#notableExtensions()} lists those present. */
    public static final List<String> NOTABLE_EXTENSIONS = List.of(
            "cl_khr_fp16", "cl_khr_fp64", "cl_khr_subgroups", "cl_intel_subgroups", "cl_khr_int64_base_atomics");

    /** One device; {@code index} counts devices across all platforms in enumeration order (what --device takes). */
    public record Device(
            int index,
            String platformName,
            String name,
            String vendor,
            String version,
            String driverVersion,
            DeviceType type,
            int computeUnits,
            long globalMemSize,
            long maxAllocSize,
            long localMemSize,
            long maxWorkGroupSize,
            Set<String> extensions) {

        public Device {
            extensions = Set.copyOf(extensions);
        }

        public List<String> notableExtensions() {
            return NOTABLE_EXTENSIONS.stream().filter(extensions::contains).toList();
        }

        /** The device's OpenCL version is at least 1.2 (the kernels and clEnqueueFillBuffer need it). */
        public boolean supportsOpenCl12() {
            Matcher m = Pattern.compile("OpenCL (\\d+)\\.(\\d+)").matcher(version);
            if (!m.find()) return false;
            int major = Integer.parseInt(m.group(1));
            return major > 1 || (major == 1 && Integer.parseInt(m.group(2)) >= 2);
        }
    }

    /** A platform (one installed driver) and its devices. */
    public record Platform(String name, String vendor, String version, List<Device> devices) {
        public Platform {
            devices = List.copyOf(devices);
        }
    }

    /** The outcome of {@link #select}: a device, or why there is none. */
    public sealed interface Selection {
        record Selected(Device device) implements Selection {}

        record NotSelected(String reason) implements Selection {}
    }

    /** What enumeration found; handles are parallel to the devices, by index. */
    private record Inventory(List<Platform> platforms, List<Device> devices, List<MemorySegment> platformIds,
            List<MemorySegment> deviceIds, Optional<String> unavailableReason) {}

    private static final class Holder {
        static final Inventory INVENTORY = enumerate();
    }

    private OpenCl() {}

    /** Every platform with its devices; empty when OpenCL is unavailable. */
    public static List<Platform> platforms() {
        return Holder.INVENTORY.platforms();
    }

    /** Every device of every platform, by index. */
    public static List<Device> devices() {
        return Holder.INVENTORY.devices();
    }

    /** Why no OpenCL device can be used (no library, no driver, no device), or empty when there is at least one. */
    public static Optional<String> unavailableReason() {
        return Holder.INVENTORY.unavailableReason();
    }

    /**
     * The device a backend should run on. With {@code deviceIndex} that device (when it exists, is OpenCL 1.2 and is
     * not a CPU device unless {@code allowCpuDevice}); without it the GPU with the most global memory, else (only when
     * {@code allowCpuDevice}) the first other OpenCL 1.2 device. {@code --backend auto} passes false: an OpenCL CPU
     * device such as PoCL is used only when asked for.
     */
    public static Selection select(boolean allowCpuDevice, Integer deviceIndex) {
        Optional<String> unavailable = unavailableReason();
        if (unavailable.isPresent()) return new Selection.NotSelected(unavailable.get());
        List<Device> devices = devices();
        if (deviceIndex != null) {
            if (deviceIndex < 0 || deviceIndex >= devices.size()) {
                return new Selection.NotSelected("there is no OpenCL device " + deviceIndex + " (devices are 0.."
                        + (devices.size() - 1) + "; 'fs devices' lists them)");
            }
            Device device = devices.get(deviceIndex);
            if (!device.supportsOpenCl12()) {
                return new Selection.NotSelected("OpenCL device " + deviceIndex + " (" + device.name() + ") is "
                        + device.version() + "; fs needs OpenCL 1.2");
            }
            if (device.type() != DeviceType.GPU && !allowCpuDevice) {
                return new Selection.NotSelected("OpenCL device " + deviceIndex + " (" + device.name() + ") is not a"
                        + " GPU; use --backend opencl to run on it");
            }
            return new Selection.Selected(device);
        }
        Optional<Device> gpu = devices.stream()
                .filter(d -> d.type() == DeviceType.GPU && d.supportsOpenCl12())
                .max(Comparator.comparingLong(Device::globalMemSize).thenComparing(d -> -d.index()));
        if (gpu.isPresent()) return new Selection.Selected(gpu.get());
        Optional<Device> other = devices.stream().filter(Device::supportsOpenCl12).findFirst();
        if (other.isEmpty()) return new Selection.NotSelected("no OpenCL device supports OpenCL 1.2");
        if (!allowCpuDevice) {
            return new Selection.NotSelected("no OpenCL GPU (device " + other.get().index() + ", "
                    + other.get().name() + ", is " + other.get().type() + "; use --backend opencl to run on it)");
        }
        return new Selection.Selected(other.get());
    }

    static MemorySegment deviceId(Device device) {
        return Holder.INVENTORY.deviceIds().get(device.index());
    }

    static MemorySegment platformId(Device device) {
        return Holder.INVENTORY.platformIds().get(device.index());
    }

    private static Inventory enumerate() {
        Optional<String> libraryFailure = OpenClLibrary.failure();
        if (libraryFailure.isPresent()) return unavailable(libraryFailure.get());
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment count = arena.allocate(ValueLayout.JAVA_INT);
            int status = clGetPlatformIDs(0, MemorySegment.NULL, count);
            if (status == ClStatus.CL_PLATFORM_NOT_FOUND_KHR || (status == CL_SUCCESS() && count.get(ValueLayout.JAVA_INT, 0) == 0)) {
                return unavailable("OpenCL has no platform (the ICD loader found no driver; install one, e.g. pocl-opencl-icd or a GPU driver)");
            }
            if (status != CL_SUCCESS()) return unavailable("clGetPlatformIDs failed: " + ClStatus.describe(status));
            int platformCount = count.get(ValueLayout.JAVA_INT, 0);
            MemorySegment platformIds = arena.allocate(ValueLayout.ADDRESS, platformCount);
            ClStatus.check(clGetPlatformIDs(platformCount, platformIds, MemorySegment.NULL), "clGetPlatformIDs");

            List<Platform> platforms = new ArrayList<>();
            List<Device> devices = new ArrayList<>();
            List<MemorySegment> devicePlatforms = new ArrayList<>();
            List<MemorySegment> deviceIds = new ArrayList<>();
            for (int p = 0; p < platformCount; p++) {
                MemorySegment platform = platformIds.getAtIndex(ValueLayout.ADDRESS, p);
                String platformName = platformString(arena, platform, CL_PLATFORM_NAME());
                List<Device> platformDevices = new ArrayList<>();
                status = clGetDeviceIDs(platform, Integer.toUnsignedLong(CL_DEVICE_TYPE_ALL()), 0, MemorySegment.NULL, count);
                int deviceCount = status == CL_SUCCESS() ? count.get(ValueLayout.JAVA_INT, 0) : 0;
                if (deviceCount > 0) {
                    MemorySegment ids = arena.allocate(ValueLayout.ADDRESS, deviceCount);
                    ClStatus.check(clGetDeviceIDs(platform, Integer.toUnsignedLong(CL_DEVICE_TYPE_ALL()), deviceCount,
                            ids, MemorySegment.NULL), "clGetDeviceIDs");
                    for (int d = 0; d < deviceCount; d++) {
                        MemorySegment id = ids.getAtIndex(ValueLayout.ADDRESS, d);
                        Device device = describe(arena, devices.size(), platformName, id);
                        devices.add(device);
                        platformDevices.add(device);
                        devicePlatforms.add(platform);
                        deviceIds.add(id);
                    }
                }
                platforms.add(new Platform(platformName, platformString(arena, platform, CL_PLATFORM_VENDOR()),
                        platformString(arena, platform, CL_PLATFORM_VERSION()), platformDevices));
            }
            Optional<String> reason = devices.isEmpty()
                    ? Optional.of("OpenCL has " + platformCount + " platform(s) but no device")
                    : Optional.empty();
            return new Inventory(List.copyOf(platforms), List.copyOf(devices), List.copyOf(devicePlatforms),
                    List.copyOf(deviceIds), reason);
        } catch (fs.FsException e) {
            return unavailable(e.getMessage());
        }
    }

    private static Inventory unavailable(String reason) {
        return new Inventory(List.of(), List.of(), List.of(), List.of(), Optional.of(reason));
    }

    private static Device describe(Arena arena, int index, String platformName, MemorySegment id) {
        long type = deviceLong(arena, id, CL_DEVICE_TYPE());
        DeviceType deviceType = (type & CL_DEVICE_TYPE_GPU()) != 0 ? DeviceType.GPU
                : (type & CL_DEVICE_TYPE_CPU()) != 0 ? DeviceType.CPU : DeviceType.OTHER;
        String extensions = deviceString(arena, id, CL_DEVICE_EXTENSIONS()).trim();
        return new Device(index, platformName,
                deviceString(arena, id, CL_DEVICE_NAME()).trim(),
                deviceString(arena, id, CL_DEVICE_VENDOR()).trim(),
                deviceString(arena, id, CL_DEVICE_VERSION()).trim(),
                deviceString(arena, id, CL_DRIVER_VERSION()).trim(),
                deviceType,
                (int) deviceLong(arena, id, CL_DEVICE_MAX_COMPUTE_UNITS()),
                deviceLong(arena, id, CL_DEVICE_GLOBAL_MEM_SIZE()),
                deviceLong(arena, id, CL_DEVICE_MAX_MEM_ALLOC_SIZE()),
                deviceLong(arena, id, CL_DEVICE_LOCAL_MEM_SIZE()),
                deviceLong(arena, id, CL_DEVICE_MAX_WORK_GROUP_SIZE()),
                extensions.isEmpty() ? Set.of() : Set.of(extensions.split("\\s+")));
    }

    private static String platformString(Arena arena, MemorySegment platform, int param) {
        return infoString(arena, (size, value, sizeOut) -> clGetPlatformInfo(platform, param, size, value, sizeOut),
                "clGetPlatformInfo");
    }

    private static String deviceString(Arena arena, MemorySegment device, int param) {
        return infoString(arena, (size, value, sizeOut) -> clGetDeviceInfo(device, param, size, value, sizeOut),
                "clGetDeviceInfo");
    }

    /** One clGet*Info call for a string: the first call asks its length, the second fills it. */
    @FunctionalInterface
    private interface InfoQuery {
        int get(long size, MemorySegment value, MemorySegment sizeOut);
    }

    private static String infoString(Arena arena, InfoQuery query, String function) {
        MemorySegment size = arena.allocate(ValueLayout.JAVA_LONG);
        ClStatus.check(query.get(0, MemorySegment.NULL, size), function);
        MemorySegment value = arena.allocate(Math.max(1, size.get(ValueLayout.JAVA_LONG, 0)));
        ClStatus.check(query.get(value.byteSize(), value, MemorySegment.NULL), function);
        return value.getString(0);
    }

    /** A numeric device property of any width (cl_uint, cl_ulong, size_t, cl_bitfield), zero-extended. */
    private static long deviceLong(Arena arena, MemorySegment device, int param) {
        MemorySegment value = arena.allocate(ValueLayout.JAVA_LONG);
        MemorySegment size = arena.allocate(ValueLayout.JAVA_LONG);
        ClStatus.check(clGetDeviceInfo(device, param, value.byteSize(), value, size), "clGetDeviceInfo");
        return size.get(ValueLayout.JAVA_LONG, 0) == 4
                ? Integer.toUnsignedLong(value.get(ValueLayout.JAVA_INT, 0))
                : value.get(ValueLayout.JAVA_LONG, 0);
    }
}
