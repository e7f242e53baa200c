package specbench.jml;

/** Thrown by translated JML checks: names the violated clause kind, its JML
 *  source line and text.  An Error, so {@code catch (Exception e)} in the
 *  program does not swallow it; {@link JmlRt} records it before it is thrown,
 *  so {@code catch (Throwable t)} cannot hide it either.  {@code top}: a requires
 *  checked in the method the driver called (the call is outside the spec's domain). */
public final class JmlViolation extends Error {
    public final String kind;
    public final int line;
    public final String clause;
    public final boolean top;

    JmlViolation(String kind, int line, String clause, boolean top, String detail) {
        super(kind + " (line " + line + "): " + clause + (detail.isEmpty() ? "" : " [" + detail + "]"), null, false, false);
        this.kind = kind;
        this.line = line;
        this.clause = clause;
        this.top = top;
    }
}
