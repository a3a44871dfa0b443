// The JVM's own ceiling for the gil study's Jython goal, measured on this machine.
//
//     java BoxedSum.java CHUNKS N TARGET_MS WARMUP REPS THREADS
//
// Jython runs the seed's chunk, sum(xrange(n)), as Java code that allocates a new
// boxed integer (PyInteger) for every element and for every partial sum. This program
// does the same in plain Java: an iterator hands out a new Box per element, the sum
// adds Boxes into a new Box, so a run allocates what Jython's allocates, without Python.
// Two variants, each with the worker's execution shapes (sequential in the main thread;
// THREADS new threads taking chunks round-robin, started and joined inside the timed
// region) and its order (warm-up runs, then the repetitions alternating between the two
// executions):
//   boxed:     one new object per element and per partial sum, as Jython;
//   primitive: the same loop on a long, allocating nothing.
// Each chunk repeats the sum so that a sequential run lasts about TARGET_MS (calibrated
// during the warm-up), and every result is checked against n(n-1)/2 per repeat.
// Prints one JSON object: per variant the repeat used and the wall times in ms.
import java.util.ArrayList;
import java.util.List;

public class BoxedSum {
    static final class Box {
        final long value;
        Box(long value) { this.value = value; }
    }

    /** Hands out a new Box per element, as Jython's xrange iterator hands out PyIntegers. */
    static final class BoxIterator {
        private long index;
        private final long length;
        BoxIterator(long length) { this.length = length; }
        Box next() { return index < length ? new Box(index++) : null; }
    }

    interface Chunk { long run(long n, int repeat); }

    static final Chunk BOXED = (n, repeat) -> {
        long total = 0;
        for (int r = 0; r < repeat; r++) {
            BoxIterator it = new BoxIterator(n);
            Box acc = new Box(0);
            for (Box item = it.next(); item != null; item = it.next()) {
                acc = new Box(acc.value + item.value);
            }
            total += acc.value;
        }
        return total;
    };

    static volatile long sink;  // keeps the primitive loop's result alive

    static final Chunk PRIMITIVE = (n, repeat) -> {
        long total = 0;
        for (int r = 0; r < repeat; r++) {
            long acc = 0;
            for (long i = 0; i < n; i++) {
                acc += i ^ (sink & 1);  // sink is 0: the same sum, not foldable to a formula
            }
            total += acc;
        }
        return total;
    };

    static long[] sequential(Chunk chunk, int chunks, long n, int repeat) {
        long[] results = new long[chunks];
        for (int c = 0; c < chunks; c++) results[c] = chunk.run(n, repeat);
        return results;
    }

    static long[] threads(Chunk chunk, int chunks, long n, int repeat, int workers) throws InterruptedException {
        long[] results = new long[chunks];
        List<Thread> started = new ArrayList<>();
        for (int w = 0; w < workers; w++) {
            final int first = w;
            started.add(new Thread(() -> {
                for (int c = first; c < chunks; c += workers) results[c] = chunk.run(n, repeat);
            }));
        }
        for (Thread t : started) t.start();
        for (Thread t : started) t.join();
        return results;
    }

    /** Wall ms of one run; exits 1 when a chunk's result is wrong. */
    static double timed(Chunk chunk, boolean threaded, int chunks, long n, int repeat, int workers)
            throws InterruptedException {
        long t0 = System.nanoTime();
        long[] results = threaded ? threads(chunk, chunks, n, repeat, workers) : sequential(chunk, chunks, n, repeat);
        double ms = (System.nanoTime() - t0) / 1e6;
        long expected = n * (n - 1) / 2 * repeat;
        for (long r : results) {
            if (r != expected) {
                System.err.println("BoxedSum: a chunk returned " + r + ", expected " + expected);
                System.exit(1);
            }
        }
        return ms;
    }

    static String variant(String name, Chunk chunk, int chunks, long n, double targetMs, int warmup, int reps,
                          int workers) throws InterruptedException {
        // the repeat that makes a sequential run last targetMs: doubled until a run lasts a
        // quarter of it, then set from the fastest of three runs; set twice, since the JIT
        // makes the loop several times faster during the first of the warm-up runs
        int repeat = 1;
        for (int pass = 0; pass < 2; pass++) {
            while (timed(chunk, false, chunks, n, repeat, workers) < targetMs / 4) repeat *= 2;
            double fastest = Double.MAX_VALUE;
            for (int i = 0; i < 3; i++) fastest = Math.min(fastest, timed(chunk, false, chunks, n, repeat, workers));
            repeat = Math.max(1, (int) Math.round(repeat * targetMs / fastest));
            for (int w = 0; w < warmup; w++) {
                timed(chunk, false, chunks, n, repeat, workers);
                timed(chunk, true, chunks, n, repeat, workers);
            }
        }
        StringBuilder seq = new StringBuilder(), thr = new StringBuilder();
        for (int r = 0; r < reps; r++) {
            seq.append(r == 0 ? "" : ", ").append(timed(chunk, false, chunks, n, repeat, workers));
            thr.append(r == 0 ? "" : ", ").append(timed(chunk, true, chunks, n, repeat, workers));
        }
        return String.format("\"%s\": {\"repeat\": %d, \"sequential_ms\": [%s], \"threads_ms\": [%s]}",
                             name, repeat, seq, thr);
    }

    public static void main(String[] args) throws InterruptedException {
        if (args.length != 6) {
            System.err.println("usage: java BoxedSum.java CHUNKS N TARGET_MS WARMUP REPS THREADS");
            System.exit(2);
        }
        int chunks = Integer.parseInt(args[0]);
        long n = Long.parseLong(args[1]);
        double targetMs = Double.parseDouble(args[2]);
        int warmup = Integer.parseInt(args[3]), reps = Integer.parseInt(args[4]), workers = Integer.parseInt(args[5]);
        System.out.println("{\"java_version\": \"" + System.getProperty("java.version") + "\", "
                + variant("boxed", BOXED, chunks, n, targetMs, warmup, reps, workers) + ", "
                + variant("primitive", PRIMITIVE, chunks, n, targetMs, warmup, reps, workers) + "}");
    }
}
