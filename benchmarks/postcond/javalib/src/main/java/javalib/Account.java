package javalib;

/** A bank account holding a non-negative balance in cents. */
public final class Account {
    private long balance;

    public Account(long opening) {
        balance = opening;
    }

    public long balance() {
        return balance;
    }

    /**
     * Withdraws an amount if the balance covers it.
     *
     * @param amount cents to withdraw
     * @return true if the amount was positive and covered (the balance drops by it),
     *         false otherwise (the balance is unchanged)
     */
    public boolean withdraw(long amount) {
        if (amount <= 0 || amount > balance) {
            return false;
        }
        balance -= amount;
        return true;
    }
}
