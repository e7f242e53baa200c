package javalib;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import org.junit.Test;

public class NumbersTest {
    @Test
    public void clampInside() {
        assertEquals(5, Numbers.clamp(5, 0, 10));
        assertEquals(0, Numbers.clamp(0, 0, 10));
        assertEquals(10, Numbers.clamp(10, 0, 10));
    }

    @Test
    public void clampOutside() {
        assertEquals(0, Numbers.clamp(-3, 0, 10));
        assertEquals(10, Numbers.clamp(11, 0, 10));
        assertEquals(-2, Numbers.clamp(-7, -2, -1));
        assertEquals(4, Numbers.clamp(9, 4, 4));
    }

    @Test
    public void primes() {
        assertTrue(Numbers.isPrime(2));
        assertTrue(Numbers.isPrime(3));
        assertTrue(Numbers.isPrime(13));
        assertTrue(Numbers.isPrime(97));
    }

    @Test
    public void nonPrimes() {
        assertFalse(Numbers.isPrime(-7));
        assertFalse(Numbers.isPrime(0));
        assertFalse(Numbers.isPrime(1));
        assertFalse(Numbers.isPrime(4));
        assertFalse(Numbers.isPrime(9));
        assertFalse(Numbers.isPrime(25));
        assertFalse(Numbers.isPrime(91));
    }

    @Test
    public void digitSums() {
        assertEquals(0, Numbers.digitSum(0));
        assertEquals(7, Numbers.digitSum(7));
        assertEquals(1, Numbers.digitSum(10));
        assertEquals(6, Numbers.digitSum(123));
        assertEquals(36, Numbers.digitSum(9999));
    }
}
