package fs.backend.opencl;

import static org.jocl.CL.*;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import fs.backend.Buffer;
import fs.backend.Weight;
import fs.tensor.DType;
import fs.tensor.Tensor;
import java.lang.foreign.Arena;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import org.jocl.Pointer;
import org.jocl.Sizeof;
import org.jocl.cl_command_queue;
import org.jocl.cl_context;
import org.jocl.cl_context_properties;
import org.jocl.cl_device_id;
import org.jocl.cl_kernel;
import org.jocl.cl_mem;
import org.jocl.cl_platform_id;
import org.jocl.cl_program;
import org.junit.jupiter.api.Test;

/**
 * Our FFM binding layer against an independent one: the same kernel (matmul_rows_cpu on bf16 weights) with the same
 * inputs and launch sizes through JOCL and through OpenClBackend must produce identical bytes.
 */
class JoclCrossCheckTest {
    private static final int ROWS = 3, N = 37, K = 203;

    @Test
    void matmulThroughJoclAndFfmGivesIdenticalBytes() {
        OpenCl.Device device = OpenClTestSupport.device();
        Random random = new Random(7);
        float[] x = OpenClTestSupport.random(random, ROWS * K);
        float[] ffm = new float[ROWS * N];
        short[] weightBits;
        try (Arena arena = Arena.ofConfined(); OpenClBackend backend = new OpenClBackend(device, KernelDesign.CPU)) {
            Tensor w = OpenClTestSupport.tensor("w", DType.BF16, OpenClTestSupport.random(random, N * K), arena, N, K);
            weightBits = w.data().toArray(ValueLayout.JAVA_SHORT);
            Weight weight = backend.upload(w);
            Buffer xBuffer = backend.allocate(x.length);
            backend.embed(backend.upload(OpenClTestSupport.tensor("x", DType.F32, x.clone(), arena, x.length)),
                    new int[] {0}, xBuffer);
            Buffer out = backend.allocate(ffm.length);
            backend.matmul(xBuffer, weight, out, ROWS);
            backend.read(out, 0, ffm);
        }
        float[] jocl = runWithJocl(device.name(), x, weightBits);
        assertArrayEquals(bits(jocl), bits(ffm));
    }

    private static float[] runWithJocl(String deviceName, float[] x, short[] weightBits) {
        setExceptionsEnabled(true);
        int[] count = new int[1];
        clGetPlatformIDs(0, null, count);
        cl_platform_id[] platforms = new cl_platform_id[count[0]];
        clGetPlatformIDs(platforms.length, platforms, null);
        for (cl_platform_id platform : platforms) {
            clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, null, count);
            cl_device_id[] devices = new cl_device_id[count[0]];
            clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, devices.length, devices, null);
            for (cl_device_id device : devices) {
                if (name(device).equals(deviceName)) return matmul(platform, device, x, weightBits);
            }
        }
        assertNotNull(null, "JOCL does not see device " + deviceName);
        return null;
    }

    private static String name(cl_device_id device) {
        long[] size = new long[1];
        clGetDeviceInfo(device, CL_DEVICE_NAME, 0, null, size);
        byte[] bytes = new byte[(int) size[0]];
        clGetDeviceInfo(device, CL_DEVICE_NAME, bytes.length, Pointer.to(bytes), null);
        return new String(bytes, 0, bytes.length - 1, StandardCharsets.UTF_8).trim();
    }

    private static float[] matmul(cl_platform_id platform, cl_device_id device, float[] x, short[] weightBits) {
        cl_context_properties properties = new cl_context_properties();
        properties.addProperty(CL_CONTEXT_PLATFORM, platform);
        cl_context context = clCreateContext(properties, 1, new cl_device_id[] {device}, null, null, null);
        @SuppressWarnings("deprecation")
        cl_command_queue queue = clCreateCommandQueue(context, device, 0, null);
        cl_program program = clCreateProgramWithSource(context, 1, new String[] {ClProgram.source("weights.cl")}, null,
                null);
        clBuildProgram(program, 0, null, KernelConstants.OPTIONS + " -D W_BF16", null, null);
        cl_kernel kernel = clCreateKernel(program, "matmul_rows_cpu", null);
        cl_mem xMem = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, (long) Sizeof.cl_float * x.length,
                Pointer.to(x), null);
        cl_mem wMem = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                (long) Sizeof.cl_short * weightBits.length, Pointer.to(weightBits), null);
        float[] out = new float[ROWS * N];
        cl_mem outMem = clCreateBuffer(context, CL_MEM_READ_WRITE, (long) Sizeof.cl_float * out.length, null, null);
        clSetKernelArg(kernel, 0, Sizeof.cl_mem, Pointer.to(xMem));
        clSetKernelArg(kernel, 1, Sizeof.cl_mem, Pointer.to(wMem));
        clSetKernelArg(kernel, 2, Sizeof.cl_mem, Pointer.to(outMem));
        clSetKernelArg(kernel, 3, Sizeof.cl_int, Pointer.to(new int[] {ROWS}));
        clSetKernelArg(kernel, 4, Sizeof.cl_int, Pointer.to(new int[] {K}));
        clSetKernelArg(kernel, 5, Sizeof.cl_int, Pointer.to(new int[] {N}));
        clSetKernelArg(kernel, 6, Sizeof.cl_int, Pointer.to(new int[] {0})); // the outputs start at column 0
        clSetKernelArg(kernel, 7, Sizeof.cl_int, Pointer.to(new int[] {N})); // of rows N apart
        // the launch CpuLauncher makes: one work-item per OUT_BLOCK outputs (each over every input row), groups of one
        long items = (N + KernelConstants.OUT_BLOCK - 1) / KernelConstants.OUT_BLOCK;
        clEnqueueNDRangeKernel(queue, kernel, 1, null, new long[] {items}, new long[] {1}, 0, null, null);
        clEnqueueReadBuffer(queue, outMem, CL_TRUE, 0, (long) Sizeof.cl_float * out.length, Pointer.to(out), 0, null,
                null);
        clReleaseMemObject(outMem);
        clReleaseMemObject(wMem);
        clReleaseMemObject(xMem);
        clReleaseKernel(kernel);
        clReleaseProgram(program);
        clReleaseCommandQueue(queue);
        clReleaseContext(context);
        return out;
    }

    private static int[] bits(float[] values) {
        int[] bits = new int[values.length];
        for (int i = 0; i < values.length; i++) bits[i] = Float.floatToRawIntBits(values[i]);
        return bits;
    }
}
