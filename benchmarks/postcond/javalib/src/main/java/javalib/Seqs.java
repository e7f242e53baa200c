package javalib;

/** Helpers on int arrays. */
public final class Seqs {
    private Seqs() {
    }

    /**
     * Position of the largest element; the first one when it occurs several times.
     *
     * @param a a non-empty array
     * @return the smallest index i such that a[i] is the maximum of a
     */
    public static int maxIndex(int[] a) {
        int best = 0;
        for (int i = 1; i < a.length; i++) {
            if (a[i] > a[best]) {
                best = i;
            }
        }
        return best;
    }

    /**
     * Counts the occurrences of a character.
     *
     * @param s a string
     * @param c the character to count
     * @return how many positions of s hold c
     */
    public static int countChar(String s, char c) {
        int n = 0;
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) == c) {
                n++;
            }
        }
        return n;
    }
}
