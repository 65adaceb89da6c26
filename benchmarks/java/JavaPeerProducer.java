/*
 * The Java producer as a peer in benchmarks/producer_bench.py (issue 14): Kafka's own KafkaProducer with KIP-794's
 * adaptive partitioning, driven by the same load as the Python producers (512-byte values whose first 8 bytes
 * are the sequence number; keys key-0000..key-0999 when keyed).
 *
 * args: bootstrap topic mode(open|closed) rate seconds keyed(0|1) startAtNanos outFile [key=value producer props...]
 *   startAtNanos: System.nanoTime() value (CLOCK_MONOTONIC on Linux, the clock Python's time.monotonic() reads)
 *   to start at, so the caller's fault schedule lines up; 0 starts at once.
 * outFile: one line per message, "seq sent_s done_s partition error" (times in seconds on that clock; done_s 0 and
 *   partition -1 when not delivered; error "-" when none). stdout: one JSON line of totals.
 *
 * Open loop as bench_load.open_loop: message n is due at t0 + n / rate; one already more than 1 s late when its
 * turn comes is skipped (counted as rejected), so a producer blocked in send() (buffer full: KafkaProducer blocks up
 * to max.block.ms where librdkafka raises BufferError) falls behind instead of building a backlog.
 */

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.io.BufferedWriter;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicLong;

public class JavaPeerProducer {
    private static final int VALUE_BYTES = 512;
    private static final int KEYS = 1000;
    private static final double MAX_LAG_S = 1.0;

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        String topic = args[1];
        boolean open = "open".equals(args[2]);
        double rate = Double.parseDouble(args[3]);
        double seconds = Double.parseDouble(args[4]);
        boolean keyed = "1".equals(args[5]);
        long startAt = Long.parseLong(args[6]);
        String outFile = args[7];
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("key.serializer", ByteArraySerializer.class.getName());
        props.put("value.serializer", ByteArraySerializer.class.getName());
        for (int i = 8; i < args.length; i++) {
            int eq = args[i].indexOf('=');
            props.put(args[i].substring(0, eq), args[i].substring(eq + 1));
        }
        int capacity = (int) Math.min(20_000_000L, (long) (open ? rate * seconds + 10 : 400_000 * seconds));
        double[] sent = new double[capacity];
        double[] done = new double[capacity];
        int[] partition = new int[capacity];
        String[] error = new String[capacity];
        java.util.Arrays.fill(partition, -1);
        byte[][] keys = new byte[KEYS][];
        for (int i = 0; i < KEYS; i++) keys[i] = String.format("key-%04d", i).getBytes(StandardCharsets.US_ASCII);
        AtomicLong delivered = new AtomicLong();
        AtomicLong failed = new AtomicLong();
        long rejected = 0;
        long blockedNanos = 0;
        int n = 0;
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props)) {
            producer.partitionsFor(topic); // metadata before the clock starts
            while (startAt > 0 && System.nanoTime() < startAt) {
                Thread.sleep(0, 200_000);
            }
            long t0 = System.nanoTime();
            long stopAt = t0 + (long) (seconds * 1e9);
            while (n < capacity) {
                long now = System.nanoTime();
                if (now >= stopAt) break;
                if (open) {
                    long due = t0 + (long) (n / rate * 1e9);
                    if (now < due) {
                        long wait = due - now;
                        if (wait > 200_000) Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                        continue;
                    }
                    if (now - due > MAX_LAG_S * 1e9) {
                        rejected++;
                        n++;
                        continue;
                    }
                }
                byte[] value = new byte[VALUE_BYTES];
                ByteBuffer.wrap(value).putLong(n);
                final int seq = n;
                byte[] key = keyed ? keys[n % KEYS] : null;
                long before = System.nanoTime();
                sent[seq] = before / 1e9;
                producer.send(new ProducerRecord<>(topic, key, value), (md, err) -> {
                    done[seq] = System.nanoTime() / 1e9;
                    if (err == null) {
                        partition[seq] = md.partition();
                        delivered.incrementAndGet();
                    } else {
                        error[seq] = err.getClass().getSimpleName();
                        failed.incrementAndGet();
                    }
                });
                blockedNanos += System.nanoTime() - before;
                n++;
            }
            double loadEnd = System.nanoTime() / 1e9;
            producer.flush();
            double end = System.nanoTime() / 1e9;
            try (BufferedWriter w = Files.newBufferedWriter(Paths.get(outFile), StandardCharsets.US_ASCII)) {
                for (int i = 0; i < n; i++) {
                    if (sent[i] == 0) continue; // skipped (rejected) messages were never sent
                    w.write(i + " " + sent[i] + " " + (error[i] == null ? done[i] : 0.0) + " " + partition[i] + " "
                            + (error[i] == null ? "-" : error[i]));
                    w.newLine();
                }
            }
            System.out.println("{\"t0\": " + (t0 / 1e9) + ", \"load_end\": " + loadEnd + ", \"end\": " + end
                    + ", \"offered\": " + n + ", \"accepted\": " + (n - rejected) + ", \"rejected\": " + rejected
                    + ", \"delivered\": " + delivered.get() + ", \"failed\": " + failed.get()
                    + ", \"send_blocked_s\": " + (blockedNanos / 1e9) + "}");
        }
    }
}
