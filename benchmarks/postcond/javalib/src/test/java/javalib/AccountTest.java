package javalib;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import org.junit.Test;

public class AccountTest {
    @Test
    public void withdrawCovered() {
        Account a = new Account(100);
        assertTrue(a.withdraw(30));
        assertEquals(70, a.balance());
        assertTrue(a.withdraw(70));
        assertEquals(0, a.balance());
    }

    @Test
    public void withdrawRefused() {
        Account a = new Account(50);
        assertFalse(a.withdraw(51));
        assertFalse(a.withdraw(0));
        assertFalse(a.withdraw(-5));
        assertEquals(50, a.balance());
        assertTrue(a.withdraw(1));
        assertEquals(49, a.balance());
    }
}
