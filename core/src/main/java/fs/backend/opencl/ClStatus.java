package fs.backend.opencl;

import fs.FsException;
import fs.opencl.bindings.opencl_h;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.HashMap;
import java.util.Map;

/** OpenCL status codes by name, and the check that turns a failed call into an {@link FsException}. */
final class ClStatus {
    /** Returned by the Khronos ICD loader when no driver is installed; defined in cl_ext.h, not cl.h. */
    static final int CL_PLATFORM_NOT_FOUND_KHR = -1001;

    private static final Map<Integer, String> NAMES = errorNames();

    private ClStatus() {}

    /** {@code "CL_OUT_OF_RESOURCES (-5)"}, or the bare number for a code cl.h does not define. */
    static String describe(int code) {
        String name = NAMES.get(code);
        return name == null ? "OpenCL error " + code : name + " (" + code + ")";
    }

    /** Throws when a call failed; {@code call} names what was attempted, e.g. {@code "clBuildProgram"}. */
    static void check(int code, String call) {
        if (code != opencl_h.CL_SUCCESS()) throw new FsException("OpenCL " + call + " failed: " + describe(code));
    }

    /** Every negative CL_* constant of the generated bindings is an error code (an OpenCL convention). */
    private static Map<Integer, String> errorNames() {
        Map<Integer, String> names = new HashMap<>();
        names.put(CL_PLATFORM_NOT_FOUND_KHR, "CL_PLATFORM_NOT_FOUND_KHR");
        for (Method method : opencl_h.class.getMethods()) {
            if (method.getName().startsWith("CL_") && method.getParameterCount() == 0
                    && method.getReturnType() == int.class && Modifier.isStatic(method.getModifiers())) {
                try {
                    int value = (int) method.invoke(null);
                    if (value < 0) names.put(value, method.getName());
                } catch (ReflectiveOperationException e) {
                    throw new AssertionError(e);
                }
            }
        }
        return Map.copyOf(names);
    }
}
