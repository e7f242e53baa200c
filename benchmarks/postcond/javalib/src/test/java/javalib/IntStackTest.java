package javalib;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import org.junit.Test;

public class IntStackTest {
    @Test
    public void pushUntilFull() {
        IntStack s = new IntStack(3);
        assertTrue(s.push(4));
        assertEquals(4, s.peek());
        assertTrue(s.push(-1));
        assertTrue(s.push(7));
        assertEquals(3, s.size());
        assertEquals(7, s.peek());
        assertFalse(s.push(9));
        assertEquals(3, s.size());
        assertEquals(7, s.peek());
    }

    @Test
    public void pushOnZeroCapacity() {
        IntStack s = new IntStack(0);
        assertFalse(s.push(1));
        assertEquals(0, s.size());
    }
}
