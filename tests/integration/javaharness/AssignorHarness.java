/*
 * Runs the real kafka-clients assignors over scenarios read as JSON, for mutepro's differential tests.
 *
 * stdin: a JSON array of scenarios
 *   {"id": "...", "assignor": "range" | "cooperative-sticky",
 *    "brokers": [{"id": 1, "rack": "a"}, ...],            (rack may be null)
 *    "topics": {"t1": [[1, 2], [2, 3]], ...},              (replica broker ids per partition, leader first)
 *    "members": [{"id": "c0", "topics": ["t1"], "rack": "a", "owned": ["t1-0"],
 *                 "generation": 3, "instance": "i0"}, ...]}  (rack/generation/instance may be null)
 * args[0]: output file, one JSON object per line (stdout is left to the clients' logging), {"id": ..., "assignment": {"c0": ["t1-0", ...]}} or {"id": ..., "error": ...}
 *
 * Members are put into a HashMap<String, Subscription> in input order, as the consumer group leader does,
 * and every scenario gets a fresh assignor instance (the sticky assignors keep state between calls).
 */

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

import java.io.BufferedWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;

public final class AssignorHarness {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private AssignorHarness() {
    }

    public static void main(String[] args) throws Exception {
        JsonNode scenarios = MAPPER.readTree(System.in);
        try (BufferedWriter out = Files.newBufferedWriter(Paths.get(args[0]), StandardCharsets.UTF_8)) {
            for (JsonNode scenario : scenarios) {
                ObjectNode result = MAPPER.createObjectNode();
                result.set("id", scenario.get("id"));
                try {
                    result.set("assignment", run(scenario));
                } catch (Exception | AssertionError e) {
                    result.put("error", e.getClass().getSimpleName() + ": " + e.getMessage());
                }
                out.write(MAPPER.writeValueAsString(result));
                out.newLine();
            }
        }
    }

    private static String textOrNull(JsonNode node, String field) {
        JsonNode value = node.get(field);
        return value == null || value.isNull() ? null : value.asText();
    }

    private static ConsumerPartitionAssignor assignor(String name) {
        switch (name) {
            case "range":
                return new RangeAssignor();
            case "cooperative-sticky":
                return new CooperativeStickyAssignor();
            default:
                throw new IllegalArgumentException("unknown assignor " + name);
        }
    }

    private static TopicPartition parsePartition(String text) {
        int dash = text.lastIndexOf('-');
        return new TopicPartition(text.substring(0, dash), Integer.parseInt(text.substring(dash + 1)));
    }

    private static ObjectNode run(JsonNode scenario) {
        Map<Integer, Node> nodes = new HashMap<>();
        for (JsonNode broker : scenario.get("brokers")) {
            int id = broker.get("id").asInt();
            nodes.put(id, new Node(id, "broker" + id, 9092, textOrNull(broker, "rack")));
        }
        List<PartitionInfo> partitions = new ArrayList<>();
        Iterator<Map.Entry<String, JsonNode>> topics = scenario.get("topics").fields();
        while (topics.hasNext()) {
            Map.Entry<String, JsonNode> topic = topics.next();
            int partition = 0;
            for (JsonNode replicaIds : topic.getValue()) {
                Node[] replicas = new Node[replicaIds.size()];
                for (int i = 0; i < replicas.length; i++)
                    replicas[i] = nodes.get(replicaIds.get(i).asInt());
                Node leader = replicas.length > 0 ? replicas[0] : null;
                partitions.add(new PartitionInfo(topic.getKey(), partition++, leader, replicas, replicas));
            }
        }
        Cluster cluster = new Cluster("mutepro", new ArrayList<>(nodes.values()), partitions,
                Collections.emptySet(), Collections.emptySet());

        Map<String, Subscription> subscriptions = new HashMap<>();
        for (JsonNode member : scenario.get("members")) {
            List<String> memberTopics = new ArrayList<>();
            member.get("topics").forEach(t -> memberTopics.add(t.asText()));
            List<TopicPartition> owned = new ArrayList<>();
            JsonNode ownedNode = member.get("owned");
            if (ownedNode != null)
                ownedNode.forEach(tp -> owned.add(parsePartition(tp.asText())));
            JsonNode generationNode = member.get("generation");
            int generation = generationNode == null || generationNode.isNull() ? -1 : generationNode.asInt();
            Subscription subscription = new Subscription(memberTopics, null, owned, generation,
                    Optional.ofNullable(textOrNull(member, "rack")));
            subscription.setGroupInstanceId(Optional.ofNullable(textOrNull(member, "instance")));
            subscriptions.put(member.get("id").asText(), subscription);
        }

        ConsumerPartitionAssignor.GroupAssignment assignment =
                assignor(scenario.get("assignor").asText()).assign(cluster, new GroupSubscription(subscriptions));
        ObjectNode result = MAPPER.createObjectNode();
        assignment.groupAssignment().forEach((member, memberAssignment) -> {
            ArrayNode list = result.putArray(member);
            memberAssignment.partitions().forEach(tp -> list.add(tp.toString()));
        });
        return result;
    }
}
