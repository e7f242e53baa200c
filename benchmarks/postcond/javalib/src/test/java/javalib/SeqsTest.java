package javalib;

import static org.junit.Assert.assertEquals;

import org.junit.Test;

public class SeqsTest {
    @Test
    public void maxIndexFindsTheLargest() {
        assertEquals(0, Seqs.maxIndex(new int[] {7}));
        assertEquals(2, Seqs.maxIndex(new int[] {1, 5, 9, 3}));
        assertEquals(0, Seqs.maxIndex(new int[] {9, 5, 1}));
        assertEquals(3, Seqs.maxIndex(new int[] {-4, -3, -2, -1}));
    }

    @Test
    public void maxIndexTakesTheFirstOfEqualMaxima() {
        assertEquals(1, Seqs.maxIndex(new int[] {2, 8, 8, 1}));
        assertEquals(0, Seqs.maxIndex(new int[] {4, 4, 4}));
    }

    @Test
    public void countChar() {
        assertEquals(0, Seqs.countChar("", 'a'));
        assertEquals(3, Seqs.countChar("banana", 'a'));
        assertEquals(1, Seqs.countChar("banana", 'b'));
    }
}
