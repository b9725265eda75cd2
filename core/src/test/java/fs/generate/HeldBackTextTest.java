package fs.generate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class HeldBackTextTest {
    @Test
    void holdsBackTheLongestTailThatMayStartAMarkerAndFindsTheFirstWholeOne() {
        HeldBackText text = new HeldBackText();
        List<String> markers = List.of("</think>", "STOP");
        text.append("abc</th");
        assertEquals(4, text.partialMarker(markers)); // "</th" may start "</think>"
        assertEquals("abc", text.takeAllBut(text.partialMarker(markers)));
        text.append("ink> ST");
        assertEquals(0, text.indexOfFirst(markers));
        assertEquals(2, text.partialMarker(List.of("STOP")));
        assertTrue(text.endsWith("STOP", 2));
        assertFalse(text.endsWith("STOP", 3));
        text.drop("</think>".length());
        text.append("STOP");
        assertEquals(3, text.indexOfFirst(markers)); // " ST" + "STOP": the first whole marker
        assertEquals(" ", text.take(1));
        assertEquals("STSTOP", text.takeAll());
        assertEquals(0, text.length());
        assertEquals(0, text.partialMarker(markers));
    }
}
