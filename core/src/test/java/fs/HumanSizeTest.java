package fs;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class HumanSizeTest {

    @Test
    void eachSizeIsInTheLargestBinaryUnitItReaches() {
        assertEquals("0 B", HumanSize.of(0));
        assertEquals("1023 B", HumanSize.of(1023));
        assertEquals("1.0 KiB", HumanSize.of(1024));
        assertEquals("40.0 KiB", HumanSize.of(40 * 1024));
        assertEquals("1.2 MiB", HumanSize.of(1_234_567));
        assertEquals("1023 MiB", HumanSize.of((1L << 30) - (1L << 20)));
        assertEquals("1.00 GiB", HumanSize.of(1L << 30));
        assertEquals("1.11 GiB", HumanSize.of(1_191_853_056L));
        assertEquals("2.00 TiB", HumanSize.of(2L << 40));
        assertEquals("8.00 EiB", HumanSize.of(Long.MAX_VALUE));
    }

    /** Three significant figures below a gibibyte: a tenth of a mebibyte says nothing about a 373 MiB file. */
    @Test
    void fromAHundredUnitsOnNoDecimalIsShown() {
        assertEquals("99.9 MiB", HumanSize.of(104_752_742L));
        assertEquals("100 MiB", HumanSize.of(104_805_172L));
        assertEquals("373 MiB", HumanSize.of(390_758_400L));
        assertEquals("512 KiB", HumanSize.of(512 * 1024));
    }
}
