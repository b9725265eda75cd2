package fs.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import fs.backend.opencl.OpenCl;
import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;

/** {@code fs devices} on whatever devices the machine has (CI: PoCL); fs-core tests the inventory and the selection. */
class DevicesCommandTest {
    @Test
    void listsEveryDeviceAndTheAutoChoice() {
        assertInstanceOf(OpenCl.Selection.Selected.class, OpenCl.select(true, null),
                "needs an OpenCL device (CI installs PoCL)");
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        assertEquals(0, Main.execute(new PrintWriter(out), new PrintWriter(err), "devices"));
        String listing = out.toString();
        for (OpenCl.Device d : OpenCl.devices()) {
            assertTrue(listing.contains(d.index() + ": " + d.name() + " [" + d.type() + "]"), listing);
        }
        boolean autoPicks = OpenCl.select(false, null) instanceof OpenCl.Selection.Selected;
        assertEquals(autoPicks, listing.contains("* = the device --backend auto uses"), listing);
        assertEquals(!autoPicks, listing.contains("--backend auto runs on the CPU: "), listing);
        assertEquals("", err.toString());
    }
}
