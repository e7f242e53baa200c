package javalib;

/** A stack of ints with a fixed capacity. */
public final class IntStack {
    private final int[] items;
    private int size;

    public IntStack(int capacity) {
        items = new int[capacity];
    }

    public int size() {
        return size;
    }

    public int capacity() {
        return items.length;
    }

    public int peek() {
        if (size == 0) {
            throw new IllegalStateException("empty stack");
        }
        return items[size - 1];
    }

    /**
     * Pushes a value unless the stack is full.
     *
     * @param v the value
     * @return true if v was pushed, false if the stack was full (then nothing changes)
     */
    public boolean push(int v) {
        if (size >= items.length) {
            return false;
        }
        items[size] = v;
        size++;
        return true;
    }
}
