package fs.format;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The OpenCL kernels' copy of the IQ2_XXS grid (native/kernels/iq2_xxs_grid.h) is {@link Iq2XxsTables}' grid. */
class Iq2XxsOpenClGridTest {
    private static final Pattern ENTRY = Pattern.compile("0x([0-9a-fA-F]{16})UL");

    @Test
    void theKernelsGridEqualsTheJavaOneEntryByEntry() throws IOException {
        String header;
        try (InputStream in = Iq2XxsOpenClGridTest.class.getResourceAsStream("/kernels/iq2_xxs_grid.h")) {
            header = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        List<Long> entries = new ArrayList<>();
        Matcher entry = ENTRY.matcher(header);
        while (entry.find()) entries.add(Long.parseUnsignedLong(entry.group(1), 16));
        assertEquals(256, entries.size(), "entries in iq2_xxs_grid.h");
        for (int i = 0; i < 256; i++) {
            assertEquals(Iq2XxsTables.gridPoint(i), entries.get(i), "grid point " + i);
        }
    }
}
