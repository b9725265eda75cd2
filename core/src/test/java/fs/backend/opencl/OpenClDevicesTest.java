package fs.backend.opencl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The inventory and the selection rules, on whatever devices the machine has (CI: PoCL); fs-cli tests {@code fs devices}. */
class OpenClDevicesTest {
    @Test
    void inventoryDescribesEveryDevice() {
        OpenClTestSupport.device();
        List<OpenCl.Device> devices = OpenCl.devices();
        assertEquals(devices.size(), OpenCl.platforms().stream().mapToInt(p -> p.devices().size()).sum());
        for (int i = 0; i < devices.size(); i++) {
            OpenCl.Device d = devices.get(i);
            assertEquals(i, d.index());
            assertFalse(d.name().isBlank());
            assertTrue(d.computeUnits() > 0 && d.globalMemSize() > 0 && d.maxAllocSize() > 0 && d.localMemSize() > 0);
            assertTrue(d.maxAllocSize() <= d.globalMemSize());
            assertTrue(d.extensions().containsAll(d.notableExtensions()));
        }
    }

    @Test
    void autoPicksOnlyAGpuAndAnIndexPicksThatDevice() {
        OpenClTestSupport.device();
        List<OpenCl.Device> devices = OpenCl.devices();
        boolean hasGpu = devices.stream().anyMatch(d -> d.type() == OpenCl.DeviceType.GPU && d.supportsOpenCl12());
        OpenCl.Selection auto = OpenCl.select(false, null);
        if (hasGpu) {
            assertEquals(OpenCl.DeviceType.GPU, assertInstanceOf(OpenCl.Selection.Selected.class, auto).device().type());
        } else {
            String reason = assertInstanceOf(OpenCl.Selection.NotSelected.class, auto).reason();
            assertTrue(reason.contains("--backend opencl"), reason);
            assertInstanceOf(OpenCl.Selection.Selected.class, OpenCl.select(true, null));
        }
        OpenCl.Device last = devices.getLast();
        assertEquals(last, assertInstanceOf(OpenCl.Selection.Selected.class, OpenCl.select(true, last.index())).device());
        String missing = assertInstanceOf(OpenCl.Selection.NotSelected.class, OpenCl.select(true, devices.size()))
                .reason();
        assertEquals("there is no OpenCL device " + devices.size() + " (devices are 0.." + (devices.size() - 1)
                + "; 'fs devices' lists them)", missing);
    }
}
